package planner

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Allowed policy values, as kubelet spells them.
var (
	cpuManagerPolicies      = []string{"none", "static"}
	memoryManagerPolicies   = []string{"None", "Static"}
	topologyManagerPolicies = []string{"none", "best-effort", "restricted", "single-numa-node"}
	topologyManagerScopes   = []string{"container", "pod"}
	cpuManagerOptions       = []string{"align-by-socket", "distribute-cpus-across-cores", "distribute-cpus-across-numa",
		"full-pcpus-only", "prefer-align-cpus-by-uncorecache", "strict-cpu-reservation"}
	topologyManagerOptions = []string{"max-allowable-numa-nodes", "prefer-closest-numa-nodes"}
)

// kubeletMaxNUMANodes is kubelet's maxAllowableNUMANodes default: with
// more nodes on the machine (cadvisor counts the whole machine, not the
// partition) every policy but none refuses to start without the option.
const kubeletMaxNUMANodes = 8

// managedFlags are kubelet flags the render sets per partition; extra_args
// must not fight them.
var managedFlags = []string{"--config", "--root-dir", "--cert-dir", "--kubeconfig", "--bootstrap-kubeconfig",
	"--hostname-override", "--node-labels", "--register-with-taints", "--node-ip"}

// checkTopologyLimit sets max-allowable-numa-nodes when the machine has
// more NUMA nodes than kubelet accepts by default.
func (pl *planning) checkTopologyLimit() {
	m, plan, warn := pl.m, pl.plan, pl.warn
	n := len(m.t.Nodes)
	if n <= kubeletMaxNUMANodes {
		return
	}
	for i := range plan.Partitions {
		kl := &plan.Partitions[i].Kubelet
		if kl.TopologyManagerPolicy == "none" {
			continue
		}
		if _, set := kl.TopologyManagerOptions["max-allowable-numa-nodes"]; set {
			continue
		}
		if kl.TopologyManagerOptions == nil {
			kl.TopologyManagerOptions = map[string]string{}
		}
		kl.TopologyManagerOptions["max-allowable-numa-nodes"] = strconv.Itoa(n)
		warn("partition %s: the machine has %d NUMA nodes, more than kubelet's default limit of %d; topology manager option max-allowable-numa-nodes=%d is set (admission gets slower with more nodes)",
			plan.Partitions[i].Name, n, kubeletMaxNUMANodes, n)
	}
}

// validatePlan checks the rules that need the whole plan.
func (pl *planning) validatePlan() {
	plan, perPart, col := pl.plan, pl.perPart, pl.col
	names := map[string]int{}
	nodeNames := map[string]int{}
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		s := perPart[i]
		nameKey := s.pre + "name"
		if s.p == nil || s.p.Name == "" {
			nameKey = ""
		}
		// A bad name or hostname also makes a bad node name: report the cause only.
		nameOK := plan.Hostname != ""
		if msg := checkName(p.Name); msg != "" {
			col.add(nameKey, "%s", msg)
			nameOK = false
		}
		if prev, dup := names[p.Name]; dup {
			col.add(nameKey, "partitions %d (nodes %s) and %d (nodes %s) are both named %q; names must be unique",
				prev, plan.Partitions[prev].Nodes, i, p.Nodes, p.Name)
			nameOK = false
		}
		names[p.Name] = i

		if p.CPUs.IsEmpty() {
			if p.HostReservedCPUs.IsEmpty() {
				col.add(nameKey, "partition %s (nodes %s) has no online CPU; give its nodes to a partition with CPUs", p.Name, p.Nodes)
			} else {
				col.add(keyReservedCPUs, "leaves partition %s (nodes %s) with no CPU: all of its CPUs %s are reserved for the host", p.Name, p.Nodes, p.HostReservedCPUs)
			}
		}

		for _, msg := range validation.IsDNS1123Subdomain(p.NodeName) {
			if nameOK {
				col.add(s.key["node_name"], "node name %q of partition %s: %s", p.NodeName, p.Name, msg)
			}
		}
		if prev, dup := nodeNames[p.NodeName]; dup && nameOK {
			col.add(s.key["node_name"], "partitions %s and %s both get node name %q; add {partition} to the template",
				plan.Partitions[prev].Name, p.Name, p.NodeName)
		}
		nodeNames[p.NodeName] = i

		pl.checkLabels(s, p)
		for _, t := range p.Taints {
			for _, msg := range checkTaint(t) {
				col.add(s.key["taints"], "%s", msg)
			}
		}
		pl.checkPolicies(s, p)
		checkExtraArgs(s, p, col)
		pl.checkRuntime(p)
	}
	pl.checkPorts()
	checkPaths(plan, col)
	pl.checkClusterDNS()
}

// checkClusterDNS: kubelet refuses to start on an address it cannot parse.
func (pl *planning) checkClusterDNS() {
	c, col := pl.c, pl.col
	for _, a := range c.Kubelet.ClusterDNS {
		if net.ParseIP(a) == nil {
			col.add("kubelet.cluster_dns", "%q is not an IP address (allowed: IPv4 or IPv6 addresses of the cluster DNS service)", a)
		}
	}
	if d := c.Kubelet.ClusterDomain; d != "" {
		if errs := validation.IsDNS1123Subdomain(d); len(errs) > 0 {
			col.add("kubelet.cluster_domain", "%q is not a DNS domain: %s", d, strings.Join(errs, "; "))
		}
	}
}

func (pl *planning) checkLabels(s settings, p *Partition) {
	c, col := pl.c, pl.col
	for _, k := range sortedKeys(p.Labels) {
		key := "kubelet.labels." + k
		if s.p != nil {
			if _, ok := s.p.Labels[k]; ok {
				key = s.pre + "labels." + k
			}
		} else if _, ok := c.Kubelet.Labels[k]; !ok {
			key = ""
		}
		for _, msg := range checkLabel(k, p.Labels[k]) {
			col.add(key, "%s", msg)
		}
	}
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

func (pl *planning) checkPolicies(s settings, p *Partition) {
	m, col := pl.m, pl.col
	kl := p.Kubelet
	for _, c := range []struct {
		setting, value string
		allowed        []string
	}{
		{"cpu_manager_policy", kl.CPUManagerPolicy, cpuManagerPolicies},
		{"memory_manager_policy", kl.MemoryManagerPolicy, memoryManagerPolicies},
		{"topology_manager_policy", kl.TopologyManagerPolicy, topologyManagerPolicies},
		{"topology_manager_scope", kl.TopologyManagerScope, topologyManagerScopes},
	} {
		if !oneOf(c.value, c.allowed) {
			col.add(s.key[c.setting], "%q is not allowed (allowed: %s)", c.value, strings.Join(c.allowed, ", "))
		}
	}
	for _, k := range sortedKeys(kl.CPUManagerPolicyOptions) {
		key := s.key["cpu_manager_policy_options"] + "." + k
		if !oneOf(k, cpuManagerOptions) {
			col.add(key, "unknown CPU manager option (allowed: %s)", strings.Join(cpuManagerOptions, ", "))
		} else if _, err := strconv.ParseBool(kl.CPUManagerPolicyOptions[k]); err != nil {
			col.add(key, "%q is not a boolean (allowed: \"true\", \"false\")", kl.CPUManagerPolicyOptions[k])
		}
		if kl.CPUManagerPolicy != "static" {
			col.add(key, "CPU manager options need cpu_manager_policy = \"static\" (it is %q)", kl.CPUManagerPolicy)
		}
	}
	for _, k := range sortedKeys(kl.TopologyManagerOptions) {
		key := s.key["topology_manager_options"] + "." + k
		v := kl.TopologyManagerOptions[k]
		switch k {
		case "prefer-closest-numa-nodes":
			if _, err := strconv.ParseBool(v); err != nil {
				col.add(key, "%q is not a boolean (allowed: \"true\", \"false\")", v)
			}
		case "max-allowable-numa-nodes":
			n, err := strconv.Atoi(v)
			if err != nil || n < kubeletMaxNUMANodes {
				col.add(key, "%q: allowed is a whole number of at least %d", v, kubeletMaxNUMANodes)
			} else if n < len(m.t.Nodes) {
				col.add(key, "%d is below the machine's %d NUMA nodes; kubelet would refuse to start", n, len(m.t.Nodes))
			}
		default:
			col.add(key, "unknown topology manager option (allowed: %s)", strings.Join(topologyManagerOptions, ", "))
		}
	}
	if kl.MaxPods < 1 {
		col.add(s.key["max_pods"], "%d: allowed is at least 1", kl.MaxPods)
	}
}

func checkExtraArgs(s settings, p *Partition, col *collector) {
	if len(p.Kubelet.ExtraArgs) > maxExtraArgs {
		col.add(s.key["extra_args"], "has %d arguments, more than %d", len(p.Kubelet.ExtraArgs), maxExtraArgs)
		return
	}
	for _, a := range p.Kubelet.ExtraArgs {
		flag, _, _ := strings.Cut(a, "=")
		// kubelet's flag parser reads '_' as '-' (--root_dir is --root-dir).
		flag = strings.ReplaceAll(flag, "_", "-")
		switch {
		case ArgProblem(a) != "":
			col.add(s.key["extra_args"], "argument %q %s", a, ArgProblem(a))
		case !strings.HasPrefix(a, "--"):
			col.add(s.key["extra_args"], "%q is not a flag (write \"--flag=value\")", a)
		case oneOf(flag, managedFlags):
			col.add(s.key["extra_args"], "%q sets %s, which numa-partition sets per partition (%s); use the config key instead", a, flag, strings.Join(managedFlags, ", "))
		}
	}
}

func (pl *planning) checkRuntime(p *Partition) {
	c, col := pl.c, pl.col
	switch c.Runtime.Mode {
	case "", RuntimeModeContainerd:
	case RuntimeModeShared:
		if c.Runtime.Endpoint == "" {
			col.add("runtime.endpoint", "is required with mode = \"shared\" (e.g. \"unix:///run/containerd/containerd.sock\")")
			return
		}
	default:
		col.add("runtime.mode", "%q is not a runtime mode (allowed: containerd, shared)", c.Runtime.Mode)
		return
	}
	if !strings.HasPrefix(p.Runtime.Endpoint, "unix:///") {
		col.add("runtime.endpoint", "%q is not a unix socket endpoint (form: unix:///path/to.sock)", p.Runtime.Endpoint)
	}
	if img := c.Runtime.SandboxImage; img != "" && !IsImageReference(img) {
		col.add("runtime.sandbox_image", "%q is not an image reference (form: [registry/]name[:tag][@sha256:digest], lowercase name)", img)
	}
}

// IsImageReference says whether s is an image reference, the only form a
// sandbox image may take (it is written into containerd's TOML).
func IsImageReference(s string) bool { return imageReference.MatchString(s) }

// imageReference is the grammar of distribution/reference, without its
// length limits: a lowercase path of components, an optional tag and an
// optional digest.
var imageReference = regexp.MustCompile(`^` +
	`([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]+)?/)?` + // registry
	`[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*` + // path
	`(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`) // tag, digest

// checkPorts: every port valid, none taken twice in the plan or by a
// well-known host component.
func (pl *planning) checkPorts() {
	c, plan, col := pl.c, pl.plan, pl.col
	type use struct{ who, key string }
	taken := map[int]use{}
	for _, p := range plan.Partitions {
		if pl.namespaced() {
			// Each partition listens in its own namespace.
			taken = map[int]use{}
		}
		kl := p.Kubelet
		list := []struct {
			key  string
			port int
		}{{"kubelet.port", kl.Port}, {"kubelet.healthz_port", kl.HealthzPort}}
		if kl.ReadOnlyPort != 0 {
			list = append(list, struct {
				key  string
				port int
			}{"kubelet.read_only_port", kl.ReadOnlyPort})
		}
		if p.Allocator.MetricsAddr != "" {
			_, ps, _ := net.SplitHostPort(p.Allocator.MetricsAddr)
			n, _ := strconv.Atoi(ps)
			list = append(list, struct {
				key  string
				port int
			}{"allocator.metrics_port", n})
		}
		for _, e := range list {
			who := fmt.Sprintf("%s of partition %s", strings.TrimPrefix(strings.TrimPrefix(e.key, "kubelet."), "allocator."), p.Name)
			switch {
			case e.port < 1 || e.port > 65535:
				col.add(e.key, "partition %s gets port %d, outside 1-65535 (lower the base or kubelet.port_stride)", p.Name, e.port)
				continue
			case wellKnownPorts[e.port] != "":
				col.add(e.key, "%s is %d, the port of %s; change the base or kubelet.port_stride", who, e.port, wellKnownPorts[e.port])
			}
			if prev, dup := taken[e.port]; dup {
				col.add(e.key, "%s is %d, already the %s (key %s); change the bases or kubelet.port_stride", who, e.port, prev.who, prev.key)
				continue
			}
			taken[e.port] = use{who, e.key}
		}
	}
	if c.Kubelet.PortStride != nil && *c.Kubelet.PortStride < 1 && len(plan.Partitions) > 1 && !pl.namespaced() {
		col.add("kubelet.port_stride", "%d: allowed is at least 1", *c.Kubelet.PortStride)
	}
}
