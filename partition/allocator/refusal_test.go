package allocator

import (
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// A refusal keeps kubelet's reason first, unchanged, then says which
// policy refused and what was asked and is free, per resource and node
// (#40: a 2Mi pod on a partition without 2Mi pages said only "failed to
// find NUMA nodes to extend the current topology hint").
func TestRefusalSaysWhatIsAskedAndFree(t *testing.T) {
	noPages := func(policy string) Config {
		cfg := uniform(2, policy, "")
		for i := range cfg.Nodes {
			cfg.Nodes[i].Hugepages = nil
		}
		return cfg
	}
	cases := []struct {
		name    string
		cfg     Config
		pod     ctr
		kubelet string // the whole of kubelet's part
		detail  string // what follows it
	}{
		{"2Mi without pages, best-effort", noPages("best-effort"), ctr{name: "c", mem: "1Gi", hp: "4Mi"},
			`UnexpectedAdmissionError: Allocate failed due to [memorymanager] failed to find NUMA nodes to extend the current topology hint, which is unexpected (container "c")`,
			"; policy best-effort, scope container; hugepages-2Mi: asked 4Mi, free 0 on nodes 0-1 (the partition has no 2Mi pages: host.hugepages); memory: asked 1Gi, free 9Gi on node 0, 10Gi on node 1"},
		{"2Mi without pages, none", noPages("none"), ctr{name: "c", mem: "1Gi", hp: "4Mi"},
			`UnexpectedAdmissionError: Allocate failed due to [memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available, which is unexpected (container "c")`,
			"; policy none, scope container; hugepages-2Mi: asked 4Mi, free 0 on nodes 0-1 (the partition has no 2Mi pages: host.hugepages); memory: asked 1Gi, free 9Gi on node 0, 10Gi on node 1"},
		{"too much memory, single-numa-node", uniform(2, "single-numa-node", ""), ctr{name: "c", mem: "7Gi"},
			`TopologyAffinityError: Resources cannot be allocated with Topology locality (container "c", best hint {nil not-preferred})`,
			"; policy single-numa-node, scope container; memory: asked 7Gi, free 5Gi on node 0, 6Gi on node 1"},
	}
	for _, c := range cases {
		a := mustNew(t, c.cfg)
		d := admit(t, a, mkPod("p", c.pod))
		if d.Admitted || d.Reason != c.kubelet+c.detail {
			t.Errorf("%s:\n got %q\nwant %q", c.name, d.Reason, c.kubelet+c.detail)
		}
	}
}

// The figures are the state the decision was made on: in pod scope a
// container that Allocate refuses is described with its own request, the
// pod's earlier containers' memory taken.
func TestRefusalFiguresAfterOtherPods(t *testing.T) {
	a := mustNew(t, uniform(2, "single-numa-node", "pod"))
	admit(t, a, mkPod("first", ctr{name: "a", mem: "3Gi", hp: "1Gi"}))
	d := admit(t, a, mkPod("second", ctr{name: "a", mem: "4Gi"}, ctr{name: "b", mem: "3Gi"}))
	want := `UnexpectedAdmissionError: Allocate failed due to [memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available, which is unexpected (container "b")` +
		"; policy single-numa-node, scope pod; memory: asked 3Gi, free 2Gi (of 5Gi) on node 0, 2Gi (of 6Gi) on node 1"
	if d.Admitted || d.Reason != want {
		t.Fatalf("\n got %q\nwant %q", d.Reason, want)
	}
	// A pod scope merge's refusal describes the pod's requests.
	a = mustNew(t, uniform(2, "restricted", "pod"))
	cpu := Hints{Pod: []topologymanager.ProviderHints{{"cpu": {topologymanager.NewHint(true, 0)}}}}
	d, err := a.AdmitWithHints(mkPod("p", ctr{name: "a", mem: "4Gi"}, ctr{name: "b", mem: "3Gi"}), cpu)
	if err != nil {
		t.Fatal(err)
	}
	want = "; policy restricted, scope pod; memory: asked 7Gi, free 5Gi on node 0, 6Gi on node 1; cpu hints: [0] preferred"
	if d.Admitted || !strings.HasPrefix(d.Reason, ReasonTopologyAffinity+": Resources cannot be allocated with Topology locality (pod, best hint") || !strings.HasSuffix(d.Reason, want) {
		t.Fatalf("%q\nwant the suffix %q", d.Reason, want)
	}
}

// A refusal the CPU manager's hints cause names them: memory fits on
// node 1 only, the CPUs on node 0 only.
func TestRefusalNamesTheCPUHints(t *testing.T) {
	a := mustNew(t, uniform(2, "restricted", ""))
	admit(t, a, mkPod("first", ctr{name: "a", mem: "5Gi"}))
	cpu := Hints{Containers: map[string][]topologymanager.ProviderHints{"a": {{"cpu": {topologymanager.NewHint(true, 0)}}}}}
	d, err := a.AdmitWithHints(mkPod("p", ctr{name: "a", mem: "2Gi"}), cpu)
	if err != nil {
		t.Fatal(err)
	}
	want := "; policy restricted, scope container; memory: asked 2Gi, free 0 (of 5Gi) on node 0, 6Gi on node 1; cpu hints: [0] preferred"
	if d.Admitted || !strings.HasPrefix(d.Reason, ReasonTopologyAffinity+": Resources cannot be allocated with Topology locality (container \"a\", best hint") ||
		!strings.HasSuffix(d.Reason, want) {
		t.Fatalf("%q\nwant the suffix %q", d.Reason, want)
	}

	// No CPU hint at all: nothing fits anywhere.
	none := Hints{Containers: map[string][]topologymanager.ProviderHints{"a": {{"cpu": {}}}}}
	d, err = a.AdmitWithHints(mkPod("q", ctr{name: "a", mem: "1Gi"}), none)
	if err != nil {
		t.Fatal(err)
	}
	if d.Admitted || !strings.HasSuffix(d.Reason, "; cpu hints: none (no NUMA nodes fit)") {
		t.Fatalf("%q", d.Reason)
	}
}
