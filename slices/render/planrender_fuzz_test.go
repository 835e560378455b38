package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// fuzzedKeys are the config values that end up in unit files, command
// lines and YAML.
var fuzzedKeys = []string{
	"kubelet.binary", "kubelet.config_path", "kubelet.root_dir", "kubelet.cert_dir", "kubelet.kubeconfig",
	"kubelet.bootstrap_kubeconfig", "kubelet.device_plugins_dir", "kubelet.pod_logs_dir", "kubelet.static_pod_path",
	"kubelet.node_name", "runtime.endpoint", "runtime.binary", "runtime.config_path", "runtime.root_dir",
	"runtime.state_dir", "runtime.cni_conf_dir", "runtime.cni_bin_dir", "runtime.sandbox_image",
	"allocator.socket", "allocator.state_dir", "kubelet.extra_args", "kubelet.labels.example.com/tier", "kubelet.taints",
}

// FuzzPlanThenRender: whatever value a key takes, a config that plans
// renders (the plan is where every rule is checked, with its line).
func FuzzPlanThenRender(f *testing.F) {
	topo, err := numa.NewFS("../../testdata/sysfs/hwloc-32amd64-4s2n4c-cgroup2/sys").Discover()
	if err != nil {
		f.Fatal(err)
	}
	for i, v := range []string{"/usr/bin/kubelet", "/var/log/../x", "/etc/k\nfoo", "/var/lib/k{partition}", "unix:///run/c-{partition}.sock",
		"--v=2", "a=b:NoSchedule", "gold", "registry.k8s.io/pause:3.10", "/run/x y/{partition}.sock", "/etc/numa-partition/x-{partition}.yaml"} {
		f.Add(uint8(i), v)
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		key := fuzzedKeys[int(which)%len(fuzzedKeys)]
		quoted, err := json.Marshal(value) // a JSON string is a TOML basic string
		if err != nil {
			return
		}
		tables := map[string][]string{"kubelet": {`hostname = "h"`}}
		section, name, _ := strings.Cut(key, ".")
		switch {
		case key == "kubelet.extra_args" || key == "kubelet.taints":
			tables[section] = append(tables[section], fmt.Sprintf("%s = [%s]", name, quoted))
		case strings.HasPrefix(key, "kubelet.labels."):
			tables["kubelet.labels"] = []string{fmt.Sprintf("%q = %s", strings.TrimPrefix(key, "kubelet.labels."), quoted)}
		default:
			tables[section] = append(tables[section], fmt.Sprintf("%s = %s", name, quoted))
		}
		var b strings.Builder
		for _, s := range []string{"kubelet", "kubelet.labels", "runtime", "allocator"} {
			if len(tables[s]) > 0 {
				fmt.Fprintf(&b, "[%s]\n%s\n", s, strings.Join(tables[s], "\n"))
			}
		}
		cfg, err := planner.Parse("fuzz.toml", []byte(b.String()))
		if err != nil {
			return
		}
		plan, err := planner.NewPlanFor(topo, planner.ExampleFacts, cfg)
		if err != nil {
			return
		}
		if _, err := RenderWith(*plan, DefaultOptions()); err != nil {
			t.Fatalf("plan accepts %s = %q, render refuses it: %v", key, value, err)
		}
	})
}
