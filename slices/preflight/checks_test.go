package preflight

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/render"
)

// twoNodeConfig partitions the two-node fixture, node1 with a drop-in
// that lets its kubelet run with swap.
const twoNodeConfig = `
[partitioning]
mode = "socket"
[network]
mode = "host"
[host]
reserved_cpus = "0"
[kubelet]
hostname = "h"
kube_reserved_memory = "64Mi"
system_reserved_memory = "64Mi"
eviction_hard_memory = "32Mi"
bootstrap_kubeconfig = "/etc/kubernetes/bootstrap-kubelet.conf"
[runtime]
cni_bin_dir = "/opt/cni/bin"
[[partition]]
nodes = [0]
[[partition]]
nodes = [1]
[partition.drop_in]
failSwapOn = false
`

// twoNodeBundle renders twoNodeConfig for the qemu-2node-v2 fixture.
func twoNodeBundle(t *testing.T) (*planner.Plan, bundle.Bundle) {
	t.Helper()
	topo, err := numa.NewFS(filepath.Join("..", "..", "testdata", "sysfs", "qemu-2node-v2", "sys")).Discover()
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse("two.toml", []byte(twoNodeConfig))
	if err != nil {
		t.Fatal(err)
	}
	facts := planner.ExampleFacts
	facts.Cgroup = cgroupmode.V2
	plan, err := planner.NewPlanFor(topo, facts, c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := render.Render(*plan)
	if err != nil {
		t.Fatal(err)
	}
	return plan, b
}

// readyRoot is a root where every check of plan passes.
func readyRoot(t *testing.T, plan *planner.Plan) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range plan.Partitions {
		put(t, root, relative(p.Kubelet.Binary), "#!/bin/sh\n", 0o755)
		put(t, root, relative(p.Runtime.Binary), "#!/bin/sh\n", 0o755)
		put(t, root, relative(p.Runtime.CNIBinDir)+"/bridge", "", 0o755)
	}
	put(t, root, "etc/kubernetes/pki/ca.crt", caPEM(t), 0o644)
	put(t, root, "etc/kubernetes/bootstrap-kubelet.conf", bootstrapKubeconfig, 0o600)
	put(t, root, "proc/1/net/tcp", tcpTable(22, 1), 0o444)
	put(t, root, "proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n", 0o444)
	return root
}

// summary is each result as "Check partition status".
func summary(rep *Report) string {
	var out []string
	for _, r := range rep.Results {
		out = append(out, strings.Join(strings.Fields(fmt.Sprintf("%s %s %s", r.Check, r.Partition, r.Status)), " "))
	}
	return strings.Join(out, "\n")
}

func TestChecksOfARenderedBundle(t *testing.T) {
	plan, b := twoNodeBundle(t)
	root := readyRoot(t, plan)
	in := Input{Root: root, Bundle: b, Mode: cgroupmode.V2}
	checks, err := Checks(in)
	if err != nil {
		t.Fatal(err)
	}
	rep := Run(checks, Ignore{})
	var want []string
	for _, p := range []string{"node0", "node1"} {
		for _, n := range []string{NameKubeletBinary, NameContainerdBinary, NameClientCA, NameKubeconfig, NameCNIBinDir, NameSwap, NameCgroupDriver} {
			want = append(want, n+" "+p+" pass")
		}
	}
	want = append(want, "Port pass", "CgroupMode pass")
	if got := summary(rep); got != strings.Join(want, "\n") {
		t.Fatalf("on a ready root:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}

	// Swap on: node0's kubelet fails on it, node1's drop-in lets it run.
	put(t, root, "proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/swapfile file 1024 0 -2\n", 0o444)
	// node0's kubelet port taken by a stranger.
	port := plan.Partitions[0].Kubelet.Port
	put(t, root, "proc/1/net/tcp", tcpTable(port, 7), 0o444)
	if err := os.Remove(filepath.Join(root, relative(plan.Partitions[0].Kubelet.Binary))); err != nil {
		t.Fatal(err)
	}
	rep = Run(mustChecks(t, in), Ignore{})
	got := summary(rep)
	for _, w := range []string{"KubeletBinary node0 error", "KubeletBinary node1 error", "Swap node0 error", "Swap node1 warning", "Port error"} {
		if !strings.Contains(got+"\n", w+"\n") {
			t.Errorf("want %q in\n%s", w, got)
		}
	}
	contains(t, rep.Err().Error(), fmt.Sprintf("port %d, planned for node0 kubelet port", port), "failSwapOn is true")

	// A bundle rendered for another cgroup mode: listed once.
	in.Mode = cgroupmode.V1
	b.CgroupV2Only = []string{"node1"}
	in.Bundle = b
	rep = Run(mustChecks(t, in), Ignore{})
	if n := strings.Count(rep.Err().Error(), "needs cgroup v2"); n != 1 {
		t.Errorf("the cgroup mode refusal listed %d times:\n%v", n, rep.Err())
	}

	// Offline, no port is checked.
	in.Offline = true
	if strings.Contains(summary(Run(mustChecks(t, in), Ignore{})), "Port") {
		t.Error("offline: ports checked")
	}
}

// A bundle made by hand, without the plan file: its ports and cgroup
// mode only.
func TestChecksWithoutPlan(t *testing.T) {
	checks, err := Checks(Input{Root: t.TempDir(), Bundle: bundle.Bundle{}, Mode: cgroupmode.V2})
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(Run(checks, Ignore{})); got != "Port pass\nCgroupMode pass" {
		t.Errorf("got\n%s", got)
	}
}

func mustChecks(t *testing.T, in Input) []Check {
	t.Helper()
	c, err := Checks(in)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
