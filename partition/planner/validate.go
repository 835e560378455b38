package planner

import (
	"fmt"
	"maps"
	"net"
	"strconv"
	"strings"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/numa-partition/numa-partition/internal/echo"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// Allowed policy values, as kubelet spells them.
var (
	cpuManagerPolicies      = []string{"none", "static"}
	memoryManagerPolicies   = []string{"None", "Static"}
	topologyManagerPolicies = []string{"none", "best-effort", "restricted", "single-numa-node"}
	topologyManagerScopes   = []string{"container", "pod"}
	cpuManagerOptions       = []string{"align-by-socket", "distribute-cpus-across-cores", "distribute-cpus-across-numa",
		"full-pcpus-only", "prefer-align-cpus-by-uncorecache", "strict-cpu-reservation"}
)

// kubeletMaxNUMANodes is kubelet's maxAllowableNUMANodes default: with
// more nodes on the machine (cadvisor counts the whole machine, not the
// partition) every policy but none refuses to start without the option.
const kubeletMaxNUMANodes = topologymanager.DefaultMaxAllowableNUMANodes

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
		if _, set := kl.TopologyManagerOptions[topologymanager.OptionMaxAllowableNUMANodes]; set {
			continue
		}
		if kl.TopologyManagerOptions == nil {
			kl.TopologyManagerOptions = map[string]string{}
		}
		// The one option, in kubelet's form as PolicyOptions writes it.
		maps.Copy(kl.TopologyManagerOptions, topologymanager.PolicyOptions{MaxAllowableNUMANodes: n}.Map())
		warn("partition %s: the machine has %d NUMA nodes, more than kubelet's default limit of %d; topology manager option max-allowable-numa-nodes=%d is set (admission gets slower with more nodes)",
			plan.Partitions[i].Name, n, kubeletMaxNUMANodes, n)
	}
}

// validatePlan checks the rules that need the whole plan.
func (pl *planning) validatePlan() {
	plan, col := pl.plan, pl.col
	// Without partitions for reasons already reported (a bad mode), that
	// is the problem to fix.
	if len(plan.Partitions) == 0 && col.Err() == nil {
		key := "partitioning"
		if pl.c.Partitioning.ExcludeNodes.Set {
			key = "partitioning.exclude_nodes"
		}
		col.Add(key, "leaves no partition: every NUMA node with CPUs is excluded or in no group (nothing would run pods); keep at least one")
	}
	u := uniqueNames{names: map[string]int{}, nodeNames: map[string]int{}}
	for i := range plan.Partitions {
		pl.checkNames(i, &u)
		pl.checkPartition(i)
	}
	pl.checkPorts()
	checkPaths(plan, col, func(i int, key string) string {
		// A binary set for one partition is reported at its own key.
		switch key {
		case "kubelet.binary":
			return pl.perPart[i].key["binary"]
		case "runtime.binary":
			return pl.perPart[i].key["runtime.binary"]
		}
		return key
	})
	pl.checkClusterDNS()
	pl.checkDropIns()
	if msg := validation.SocketGroupProblem(pl.c.Allocator.SocketGroup); msg != "" {
		col.Add("allocator.socket_group", "%s", config.Whole(msg))
	}
}

// uniqueNames are the partition names and Node names seen so far, with
// the index of the partition that took each.
type uniqueNames struct {
	names, nodeNames map[string]int
}

// checkNames checks partition i's name and Node name, each valid and
// unique. A bad name or hostname also makes a bad Node name: only the
// cause is reported.
func (pl *planning) checkNames(i int, u *uniqueNames) {
	plan, col := pl.plan, pl.col
	p, s := &plan.Partitions[i], pl.perPart[i]
	nameKey := s.pre + "name"
	if s.p == nil || s.p.Name == "" {
		nameKey = ""
	}
	nameOK := plan.Hostname != ""
	if msg := validation.NameProblem(p.Name); msg != "" {
		col.Add(nameKey, "%s", config.Whole(msg))
		nameOK = false
	}
	if prev, dup := u.names[p.Name]; dup {
		col.Add(nameKey, "partitions %d (nodes %s) and %d (nodes %s) are both named %q; names must be unique",
			prev, plan.Partitions[prev].Nodes, i, p.Nodes, p.Name)
		nameOK = false
	}
	u.names[p.Name] = i
	if p.CPUs.IsEmpty() {
		if p.HostReservedCPUs.IsEmpty() {
			col.Add(nameKey, "partition %s (nodes %s) has no online CPU; give its nodes to a partition with CPUs", p.Name, p.Nodes)
		} else {
			col.Add(keyReservedCPUs, "leaves partition %s (nodes %s) with no CPU: all of its CPUs %s are reserved for the host", p.Name, p.Nodes, p.HostReservedCPUs)
		}
	}
	for _, msg := range k8svalidation.IsDNS1123Subdomain(p.NodeName) {
		if nameOK {
			col.Add(s.key["node_name"], "node name %q of partition %s: %s", p.NodeName, p.Name, config.Whole(msg))
		}
	}
	if prev, dup := u.nodeNames[p.NodeName]; dup && nameOK {
		col.Add(s.key["node_name"], "partitions %s and %s both get node name %q; add {partition} to the template",
			plan.Partitions[prev].Name, p.Name, p.NodeName)
	}
	u.nodeNames[p.NodeName] = i
}

// checkPartition checks partition i's labels, taints, policies, extra
// arguments and runtime.
func (pl *planning) checkPartition(i int) {
	col := pl.col
	p, s := &pl.plan.Partitions[i], pl.perPart[i]
	pl.checkLabels(s, p)
	// Each list at its own key: a [[partition]]'s taints add to
	// [kubelet]'s.
	for _, taints := range []struct {
		key  string
		list []string
	}{{"kubelet.taints", s.k.Taints}, {partKey(s, "taints"), partTaints(s)}} {
		for _, t := range taints.list {
			for _, msg := range checkTaint(t) {
				col.Add(taints.key, "%s", config.Whole(msg))
			}
		}
	}
	pl.checkPolicies(s, p)
	checkExtraArgs(s, p, col)
	pl.checkRuntime(p)
	if s.p != nil && s.p.ContainerdBinary != "" && p.Runtime.Kind != RuntimeContainerd {
		col.Add(s.key["runtime.binary"], "names partition %s's own containerd, which runtime.mode = \"shared\" does not run (allowed: runtime.mode = \"containerd\", or no containerd_binary)", p.Name)
	}
}

// checkClusterDNS: kubelet refuses to start on an address it cannot parse.
func (pl *planning) checkClusterDNS() {
	c, col := pl.c, pl.col
	for _, a := range c.Kubelet.ClusterDNS {
		if net.ParseIP(a) == nil {
			col.Add("kubelet.cluster_dns", "%q is not an IP address (allowed: IPv4 or IPv6 addresses of the cluster DNS service)", a)
		}
	}
	if d := c.Kubelet.ClusterDomain; d != "" {
		if errs := k8svalidation.IsDNS1123Subdomain(d); len(errs) > 0 {
			col.Add("kubelet.cluster_domain", "%q is not a DNS domain: %s", d, config.Whole(strings.Join(errs, "; ")))
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
		if k == LabelHost {
			key = "kubelet.hostname" // its value is the host's name
		}
		for _, msg := range validation.LabelProblems(k, p.Labels[k]) {
			col.Add(key, "%s", config.Whole(msg))
		}
		_, inKubelet := c.Kubelet.Labels[k]
		_, inPartition := partLabels(s)[k]
		if msg := ownKeyProblem("label", k); msg != "" && (inKubelet || inPartition) {
			col.Add(key, "%s", config.Whole(msg))
		}
	}
	if msg := labelsArgProblem(p); msg != "" {
		key := "kubelet.labels"
		if len(partLabels(s)) > 0 {
			key = s.pre + "labels"
		}
		col.Add(key, "%s", config.Whole(msg))
	}
}

// labelsArgProblem says why partition p's labels make a --node-labels
// argument no command line of the tool's carries, "" when they do not
// (each label's own rule is validation.LabelProblems).
func labelsArgProblem(p *Partition) string {
	if arg := NodeLabelsArg(p.Labels); len(arg) > validation.MaxArgLength {
		return fmt.Sprintf("partition %s has %d labels, which make kubelet's --node-labels argument %d bytes long, more than %d; use fewer or shorter labels", echo.Value(p.Name), len(p.Labels), len(arg), validation.MaxArgLength)
	}
	return ""
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// StrictCPUReservationProblem says why kubelet's CPU manager options are
// not what a partition's kubelet needs, "" when they are: under the static
// policy strict-cpu-reservation must be "true", or best-effort and
// burstable pods get the reserved CPUs, i.e. the other partitions', and
// fail to start ("permission denied" from the cgroup cpuset). The planner
// sets it; a plan file is held to it where it is read (CheckPlanFile).
func StrictCPUReservationProblem(kl *Kubelet) string {
	if kl.CPUManagerPolicy != "static" {
		return ""
	}
	if v := kl.CPUManagerPolicyOptions["strict-cpu-reservation"]; v != "true" {
		return fmt.Sprintf("%q: it must be \"true\" under the static policy (the reserved CPUs are the other partitions')", v)
	}
	return ""
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
			col.Add(s.key[c.setting], "%q is not allowed (allowed: %s)", c.value, config.Whole(strings.Join(c.allowed, ", ")))
		}
	}
	for _, k := range sortedKeys(kl.CPUManagerPolicyOptions) {
		key := s.key["cpu_manager_policy_options"] + "." + k
		if !oneOf(k, cpuManagerOptions) {
			col.Add(key, "unknown CPU manager option (allowed: %s)", config.Whole(strings.Join(cpuManagerOptions, ", ")))
		} else if _, err := strconv.ParseBool(kl.CPUManagerPolicyOptions[k]); err != nil {
			col.Add(key, "%q is not a boolean (allowed: \"true\", \"false\")", kl.CPUManagerPolicyOptions[k])
		}
		if kl.CPUManagerPolicy != "static" {
			col.Add(key, "CPU manager options need cpu_manager_policy = \"static\" (it is %q)", kl.CPUManagerPolicy)
		}
	}
	if msg := StrictCPUReservationProblem(&kl); msg != "" {
		col.Add(s.key["cpu_manager_policy_options"]+".strict-cpu-reservation", "%s", config.Whole(msg))
	}
	// Each option is read by the one rule (PolicyOptions.Set), key by
	// key, so that every wrong one is reported with its file, line and key.
	var opts topologymanager.PolicyOptions
	for _, k := range sortedKeys(kl.TopologyManagerOptions) {
		key := s.key["topology_manager_options"] + "." + k
		if msg := opts.Set(k, kl.TopologyManagerOptions[k]); msg != "" {
			col.Add(key, "%s", config.Whole(msg))
		} else if n := opts.MaxAllowableNUMANodes; k == topologymanager.OptionMaxAllowableNUMANodes && n < len(m.t.Nodes) {
			col.Add(key, "%d is below the machine's %d NUMA nodes; kubelet would refuse to start", n, len(m.t.Nodes))
		}
	}
	if msg := validation.MaxPodsProblem(kl.MaxPods); msg != "" {
		col.Add(s.key["max_pods"], "%s", config.Whole(msg))
	}
}

func checkExtraArgs(s settings, p *Partition, col *config.Collector) {
	for _, msg := range validation.ExtraArgsProblems(p.Kubelet.ExtraArgs) {
		col.Add(s.key["extra_args"], "%s", config.Whole(msg))
	}
}

func (pl *planning) checkRuntime(p *Partition) {
	c, col := pl.c, pl.col
	switch c.Runtime.Mode {
	case "", config.RuntimeModeContainerd:
	case config.RuntimeModeShared:
		if c.Runtime.Endpoint == "" {
			col.Add("runtime.endpoint", "is required with mode = \"shared\" (e.g. \"unix:///run/containerd/containerd.sock\")")
			return
		}
	default:
		col.Add("runtime.mode", "%q is not a runtime mode (allowed: containerd, shared)", c.Runtime.Mode)
		return
	}
	// The endpoint's form and path are checkPaths's.
	if msg := sandboxImageProblem(c.Runtime.SandboxImage); msg != "" {
		col.Add("runtime.sandbox_image", "%s", config.Whole(msg))
	}
}

// sandboxImageProblem says what is wrong with a sandbox image, "" when
// nothing (or when it is unset: containerd's default). It is written into
// containerd's TOML, so it must be an image reference and nothing more;
// a plan file's is held to it too (CheckPlanFile).
func sandboxImageProblem(img string) string {
	if img == "" || validation.IsImageReference(img) {
		return ""
	}
	return fmt.Sprintf("%q is not an image reference (form: [registry/]name[:tag][@sha256:digest], lowercase name)", echo.Value(img))
}

// checkPortBases: the configured bases and stride are ports or port
// distances before any arithmetic, so that a huge base cannot wrap around
// into a valid port. It returns the keys it refused.
func (pl *planning) checkPortBases() map[string]bool {
	k, col := pl.c.Kubelet, pl.col
	bad := map[string]bool{}
	for _, b := range []struct {
		key   string
		value *int
		min   int
	}{
		{"kubelet.port", k.Port, 1}, {"kubelet.healthz_port", k.HealthzPort, 1},
		{"kubelet.read_only_port", k.ReadOnlyPort, 0}, {"kubelet.port_stride", k.PortStride, 0},
		{"allocator.metrics_port", pl.c.Allocator.MetricsPort, 0},
	} {
		if b.value != nil && (*b.value < b.min || *b.value > 65535) {
			col.Add(b.key, "%d: allowed are %d-65535", *b.value, b.min)
			bad[b.key] = true
		}
	}
	return bad
}

// checkPorts: every port valid, none taken twice in the plan or by a
// well-known host component.
func (pl *planning) checkPorts() {
	c, plan, col := pl.c, pl.plan, pl.col
	bad := pl.checkPortBases()
	if bad["kubelet.port_stride"] {
		return // every partition's port is off
	}
	checkPlanPorts(plan, pl.namespaced(), bad, col)
	if c.Kubelet.PortStride != nil && *c.Kubelet.PortStride < 1 && len(plan.Partitions) > 1 && !pl.namespaced() {
		col.Add("kubelet.port_stride", "%d: allowed is at least 1", *c.Kubelet.PortStride)
	}
}

// CheckPorts checks the ports of a plan read from a file with the
// rules the plan was made by (checkPlanPorts): CheckPlanFile calls it,
// so that a plan file can carry no port the planner would have refused.
func CheckPorts(plan *Plan) error {
	col := config.NewCollector(nil)
	checkPlanPorts(plan, false, nil, col)
	return col.Err()
}

// checkPlanPorts: each partition's kubelet ports and allocator metrics
// port (read-only and metrics when not 0) are in 1-65535, none is a
// well-known host component's, and none is taken twice where they share
// a network namespace: the host's, or a partition's own (p.Network; every
// partition's with namespaced, as network.mode says, even where the
// planner reported a pool too small to address it). The keys in bad
// (bases already refused) are not checked again.
func checkPlanPorts(plan *Plan, namespaced bool, bad map[string]bool, col *config.Collector) {
	type use struct{ who, key string }
	host := map[int]use{}
	for _, p := range plan.Partitions {
		taken := host
		if namespaced || p.Network != nil {
			// Each partition listens in its own namespace.
			taken = map[int]use{}
		}
		kl := p.Kubelet
		type entry struct {
			key  string
			port int
		}
		list := []entry{{"kubelet.port", kl.Port}, {"kubelet.healthz_port", kl.HealthzPort}}
		if kl.ReadOnlyPort != 0 {
			list = append(list, entry{"kubelet.read_only_port", kl.ReadOnlyPort})
		}
		if p.Allocator.MetricsPort != 0 {
			list = append(list, entry{"allocator.metrics_port", p.Allocator.MetricsPort})
		}
		for _, e := range list {
			if bad[e.key] {
				continue
			}
			who := fmt.Sprintf("%s of partition %s", strings.TrimPrefix(strings.TrimPrefix(e.key, "kubelet."), "allocator."), p.Name)
			switch {
			case e.port < 1 || e.port > 65535:
				col.Add(e.key, "partition %s gets port %d, outside 1-65535 (lower the base or kubelet.port_stride)", p.Name, e.port)
				continue
			case wellKnownPorts[e.port] != "":
				col.Add(e.key, "%s is %d, the port of %s; change the base or kubelet.port_stride", who, e.port, wellKnownPorts[e.port])
			}
			if prev, dup := taken[e.port]; dup {
				col.Add(e.key, "%s is %d, already the %s (key %s); change the bases or kubelet.port_stride", who, e.port, prev.who, prev.key)
				continue
			}
			taken[e.port] = use{who, e.key}
		}
	}
}
