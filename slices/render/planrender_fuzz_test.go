package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// fuzzedKey is a config key whose value ends in unit files, command
// lines, YAML or TOML, with where the same value sits in a plan file.
type fuzzedKey struct {
	// key is the config key: "section.name", "partition.name" for the
	// first [[partition]] (nodes = [0]). A map key (labels, options)
	// takes "KEY=VALUE" as its value, a list key one element.
	key string
	// set puts the value where a plan file carries it: in every partition
	// for a [kubelet], [runtime] or [allocator] key, in the first for a
	// [[partition]] key. nil: the value is no plan field of its own (it
	// only feeds templates the planner expands).
	set func(p *planner.Partition, first bool, v string)
}

// each sets a field of every partition (a key of every partition) or of
// the first only (a [[partition]] key).
func each(perPartition bool, f func(p *planner.Partition, v string)) func(*planner.Partition, bool, string) {
	return func(p *planner.Partition, first bool, v string) {
		if first || !perPartition {
			f(p, v)
		}
	}
}

func mapEntry(v string) (string, string) {
	k, val, _ := strings.Cut(v, "=")
	return k, val
}

// setOption sets a Topology Manager option where the plan carries it:
// the kubelet's, and the allocator's when the allocator is the policy.
func setOption(p *planner.Partition, v string) {
	k, val := mapEntry(v)
	if p.Kubelet.TopologyManagerOptions == nil {
		p.Kubelet.TopologyManagerOptions = map[string]string{}
	}
	p.Kubelet.TopologyManagerOptions[k] = val
	if p.Allocator.Mode == config.AllocatorModeNRI {
		if p.Allocator.TopologyOptions == nil {
			p.Allocator.TopologyOptions = map[string]string{}
		}
		p.Allocator.TopologyOptions[k] = val
	}
}

// addTaint adds taint v as a plan file carries it (set only for a value
// the planner accepted).
func addTaint(p *planner.Partition, v string) {
	t, _ := planner.ParseTaint(v)
	p.Taints = append(p.Taints, t)
}

// rename is a partition named v in a plan file: its name and what the
// planner derives from it.
func rename(p *planner.Partition, v string) {
	p.Name, p.Slice, p.Kubelet.CgroupRoot = v, v+".slice", planner.CgroupRoot(v)
	p.Labels[planner.LabelPartition] = v
	if p.Allocator.NRIPlugin != "" {
		p.Allocator.NRIPlugin = planner.NRIPluginName(v)
	}
	if p.Network != nil {
		p.Network.Namespace, p.Network.HostLink = planner.NamespaceOf(v), planner.HostLinkOf(v)
	}
	for i := range p.NodeDirs {
		p.NodeDirs[i].Source = planner.NodeDirSource(p.NodeDirs[i].Path, v)
	}
}

// fuzzedKeys are the config values that end up in unit files, command
// lines, YAML and TOML. Inputs name a key by its index modulo the count:
// new keys go at the end, so that the seeds (indices below 23) keep theirs.
var fuzzedKeys = []fuzzedKey{
	{"kubelet.binary", each(false, func(p *planner.Partition, v string) { p.Kubelet.Binary = v })},
	{"kubelet.config_path", each(false, func(p *planner.Partition, v string) { p.Kubelet.ConfigPath = v })},
	{"kubelet.root_dir", each(false, func(p *planner.Partition, v string) { p.Kubelet.RootDir = v })},
	{"kubelet.cert_dir", each(false, func(p *planner.Partition, v string) { p.Kubelet.CertDir = v })},
	{"kubelet.kubeconfig", each(false, func(p *planner.Partition, v string) { p.Kubelet.Kubeconfig = v })},
	{"kubelet.bootstrap_kubeconfig", each(false, func(p *planner.Partition, v string) { p.Kubelet.BootstrapKubeconfig = v })},
	{"kubelet.device_plugins_dir", each(false, func(p *planner.Partition, v string) { p.Kubelet.DevicePluginsDir = v })},
	{"kubelet.pod_logs_dir", each(false, func(p *planner.Partition, v string) { p.Kubelet.PodLogsDir = v })},
	{"kubelet.static_pod_path", each(false, func(p *planner.Partition, v string) { p.Kubelet.StaticPodPath = v })},
	{"kubelet.node_name", each(false, func(p *planner.Partition, v string) { p.NodeName = v })},
	{"runtime.endpoint", each(false, func(p *planner.Partition, v string) { p.Runtime.Endpoint = v })},
	{"runtime.binary", each(false, func(p *planner.Partition, v string) { p.Runtime.Binary = v })},
	{"runtime.config_path", each(false, func(p *planner.Partition, v string) { p.Runtime.ConfigPath = v })},
	{"runtime.root_dir", each(false, func(p *planner.Partition, v string) { p.Runtime.RootDir = v })},
	{"runtime.state_dir", each(false, func(p *planner.Partition, v string) { p.Runtime.StateDir = v })},
	{"runtime.cni_conf_dir", each(false, func(p *planner.Partition, v string) { p.Runtime.CNIConfDir = v })},
	{"runtime.cni_bin_dir", each(false, func(p *planner.Partition, v string) { p.Runtime.CNIBinDir = v })},
	{"runtime.sandbox_image", each(false, func(p *planner.Partition, v string) { p.Runtime.SandboxImage = v })},
	{"allocator.socket", each(false, func(p *planner.Partition, v string) { p.Allocator.Socket = v })},
	{"allocator.state_dir", each(false, func(p *planner.Partition, v string) { p.Allocator.StateDir = v })},
	{"kubelet.extra_args", each(false, func(p *planner.Partition, v string) { p.Kubelet.ExtraArgs = append(p.Kubelet.ExtraArgs, v) })},
	{"kubelet.labels.example.com/tier", each(false, func(p *planner.Partition, v string) { p.Labels["example.com/tier"] = v })},
	{"kubelet.taints", each(false, addTaint)},
	// Issue 27: names, Topology Manager options, socket groups, label keys.
	{"partition.name", each(true, rename)},
	{"allocator.socket_group", each(false, func(p *planner.Partition, v string) { p.Allocator.SocketGroup = v })},
	{"kubelet.labels", each(false, func(p *planner.Partition, v string) { k, val := mapEntry(v); p.Labels[k] = val })},
	{"partition.labels", each(true, func(p *planner.Partition, v string) { k, val := mapEntry(v); p.Labels[k] = val })},
	{"partition.taints", each(true, addTaint)},
	{"kubelet.topology_manager_options", each(false, setOption)},
	{"partition.topology_manager_options", each(true, setOption)},
	{"kubelet.topology_manager_policy", each(false, func(p *planner.Partition, v string) { p.Kubelet.TopologyManagerPolicy = v })},
	{"kubelet.topology_manager_scope", each(false, func(p *planner.Partition, v string) { p.Kubelet.TopologyManagerScope = v })},
	{"partition.node_name", each(true, func(p *planner.Partition, v string) { p.NodeName = v })},
	{"kubelet.hostname", nil},
}

// fuzzConfig is a config that sets key to value (quoted: a JSON string is
// a TOML basic string) besides the base config (kubelet.hostname).
func fuzzConfig(key, value string) (string, bool) {
	str := func(s string) string {
		q, err := json.Marshal(s)
		if err != nil {
			return ""
		}
		return string(q)
	}
	q := str(value)
	if q == "" {
		return "", false
	}
	tables := map[string][]string{}
	if key != "kubelet.hostname" {
		tables["kubelet"] = []string{`hostname = "h"`}
	}
	section, name, _ := strings.Cut(key, ".")
	if section == "partition" {
		section = "[partition]"
	}
	switch {
	case name == "extra_args" || name == "taints":
		tables[section] = append(tables[section], fmt.Sprintf("%s = [%s]", name, q))
	case strings.HasPrefix(key, "kubelet.labels."):
		tables["kubelet.labels"] = []string{fmt.Sprintf("%q = %s", strings.TrimPrefix(key, "kubelet.labels."), q)}
	case name == "labels" || name == "topology_manager_options":
		k, v := mapEntry(value)
		tables[section] = append(tables[section], fmt.Sprintf("%s = { %s = %s }", name, str(k), str(v)))
	default:
		tables[section] = append(tables[section], fmt.Sprintf("%s = %s", name, q))
	}
	var b strings.Builder
	for _, s := range []string{"kubelet", "kubelet.labels", "runtime", "allocator"} {
		if len(tables[s]) > 0 {
			fmt.Fprintf(&b, "[%s]\n%s\n", s, strings.Join(tables[s], "\n"))
		}
	}
	if len(tables["[partition]"]) > 0 {
		fmt.Fprintf(&b, "[[partition]]\nnodes = [0]\n%s\n", strings.Join(tables["[partition]"], "\n"))
	}
	return b.String(), true
}

// FuzzPlanThenRender: whatever value a key takes, a config that plans
// renders (the plan is where every rule is checked, with its line); and
// what a plan file is refused for where it enters (planner.ParsePlan),
// the planner refused in a config: the value set where the plan carries
// it (in a plan of the base config), written and read back as a plan
// file, is read and renders unless the config with it does not plan. A
// value with a placeholder ({partition}) is a template in a config, and
// "" the default, not the same value in a plan file: only the first
// direction holds for them.
func FuzzPlanThenRender(f *testing.F) {
	topo, err := numa.NewFS("../../testdata/sysfs/hwloc-32amd64-4s2n4c-cgroup2/sys").Discover()
	if err != nil {
		f.Fatal(err)
	}
	base, err := config.Parse("base.toml", []byte("[kubelet]\nhostname = \"h\"\n"))
	if err != nil {
		f.Fatal(err)
	}
	basePlan, err := planner.NewPlanFor(topo, planner.ExampleFacts, base)
	if err != nil {
		f.Fatal(err)
	}
	for i, v := range []string{"/usr/bin/kubelet", "/var/log/../x", "/etc/k\nfoo", "/var/lib/k{partition}", "unix:///run/c-{partition}.sock",
		"--v=2", "a=b:NoSchedule", "gold", "registry.k8s.io/pause:3.10", "/run/x y/{partition}.sock", "/etc/numa-partition/x-{partition}.yaml"} {
		f.Add(uint8(i), v)
	}
	index := map[string]uint8{}
	for i, k := range fuzzedKeys {
		index[k.key] = uint8(i)
	}
	// Issue 24's hostile values, each where it does harm.
	for _, c := range []struct{ key, value string }{
		{"partition.name", "0"}, {"partition.name", "1a"}, {"partition.name", "a"}, {"partition.name", "system"},
		{"partition.name", "abcdefghijklmnopqrstuvwxyz012345"}, {"partition.name", "Node0"}, {"partition.name", "node 0"},
		{"kubelet.root_dir", "/var/lib/kubelet:x/{partition}"}, {"kubelet.root_dir", "/var/lib/kubelet%i/{partition}"},
		{"kubelet.root_dir", `/var/lib/kube\let/{partition}`}, {"kubelet.root_dir", "/var/lib/kube let/{partition}"},
		{"runtime.state_dir", "/run/c:{partition}"}, {"runtime.root_dir", "/var/lib/c%n{partition}"},
		{"runtime.cni_conf_dir", "/etc/cni/net d"}, {"runtime.cni_bin_dir", `/opt/cni\bin`}, {"runtime.cni_conf_dir", "/etc/cni:x"},
		{"allocator.socket", "/run/np/{partition}%.sock"}, {"allocator.socket", "/run/np/{partition} x.sock"},
		{"allocator.state_dir", "/var/lib/np/a:{partition}"}, {"allocator.state_dir", "/var/lib/np/{partition}"},
		{"allocator.socket_group", "kube\nExecStartPre=/bin/sh"}, {"allocator.socket_group", "kube"}, {"allocator.socket_group", "0"},
		{"allocator.socket_group", "kube group"}, {"allocator.socket_group", "%i"},
		{"kubelet.labels", "numa-partition.io/partition=node2"}, {"kubelet.labels", "numa-partition.io/x=y"},
		{"partition.labels", "numa-partition.io/partition=node0"}, {"partition.labels", "numa-type=red"}, {"partition.labels", "numa-type=blue"},
		{"partition.labels", "e2e.numa-partition.io/boot=1"}, {"kubelet.labels", "kubernetes.io/hostname=x"}, {"kubelet.labels", "a=b c"},
		{"kubelet.taints", "numa-partition.io/x=y:NoSchedule"}, {"partition.taints", "a=b:NoExecute"}, {"partition.taints", "a=b c:NoSchedule"},
		{"kubelet.topology_manager_options", "max-allowable-numa-nodes=1"}, {"kubelet.topology_manager_options", "max-allowable-numa-nodes=8"},
		{"kubelet.topology_manager_options", "max-allowable-numa-nodes=x"}, {"kubelet.topology_manager_options", "prefer-closest-numa-nodes=true"},
		{"partition.topology_manager_options", "prefer-closest-numa-nodes=yes"}, {"partition.topology_manager_options", "unknown-option=true"},
		{"kubelet.topology_manager_policy", "single-numa-node"}, {"kubelet.topology_manager_policy", "restricted\n"},
		{"kubelet.topology_manager_scope", "pod"}, {"partition.node_name", "h-0"}, {"partition.node_name", "H_0"},
		{"kubelet.hostname", "h:x"}, {"kubelet.hostname", "H%i"},
	} {
		f.Add(index[c.key], c.value)
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		k := fuzzedKeys[int(which)%len(fuzzedKeys)]
		text, ok := fuzzConfig(k.key, value)
		if !ok {
			return
		}
		planned := false
		if cfg, err := config.Parse("fuzz.toml", []byte(text)); err == nil {
			if plan, err := planner.NewPlanFor(topo, planner.ExampleFacts, cfg); err == nil {
				planned = true
				if _, err := RenderWith(*plan, DefaultOptions()); err != nil {
					t.Fatalf("plan accepts %s = %q, render refuses it: %v", k.key, value, err)
				}
			}
		}
		if !planned || k.set == nil || strings.Contains(value, "{") || value == "" {
			// Refused in a config (a plan file may be refused too), a
			// template, or "" (unset in a config: the default): nothing
			// more to compare.
			return
		}
		file := clonePlan(t, basePlan)
		for i := range file.Partitions {
			k.set(&file.Partitions[i], i == 0, value)
		}
		data, err := json.Marshal(file)
		if err != nil {
			t.Fatal(err)
		}
		read, err := planner.ParsePlan("plan.json", data)
		if err != nil {
			t.Fatalf("a plan file with %s = %q is refused, but plan accepts it in a config: %v", k.key, value, err)
		}
		if _, err := RenderWith(*read, DefaultOptions()); err != nil {
			t.Fatalf("render refuses %s = %q in a plan file, but plan accepts it in a config: %v", k.key, value, err)
		}
	})
}

// clonePlan is a deep copy of p (through its JSON, as a plan file is).
func clonePlan(t *testing.T, p *planner.Plan) *planner.Plan {
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	out, err := planner.ParsePlan("plan.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
