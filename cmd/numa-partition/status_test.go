package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/nodeview"
)

func statusWithNodes() *status.Status {
	part := func(name string, n status.NodeStatus) status.PartitionStatus {
		return status.PartitionStatus{Name: name, Slice: name + ".slice", Units: []status.UnitState{}, Nodes: []status.NodeState{},
			EffectiveCPUs: "1-3", EffectiveMems: "0", Kubelet: status.Probe{OK: true}, Allocator: status.Probe{OK: true}, Node: n}
	}
	return &status.Status{Health: status.Degraded, Generation: 3, CgroupMode: transaction.CgroupV2,
		Partitions: []status.PartitionStatus{
			part("node0", status.NodeStatus{Name: "host-node0", Ready: true, Condition: "True", Reason: "KubeletReady",
				Allocatable: map[string]string{"cpu": "3"}, Capacity: map[string]string{"cpu": "8"}}),
			part("node1", status.NodeStatus{Name: "host-node1", Condition: "False", Reason: "KubeletNotReady"}),
			part("node2", status.NodeStatus{Name: "host-node2", Reason: status.NodeNoReadyCondition}),
			part("node3", status.NodeStatus{Name: "host-node3", Reason: status.NodeUnreachable}),
			part("node4", status.NodeStatus{Reason: status.NodeNotRecorded}),
		},
		Problems: []string{"Node host-node1 NotReady: KubeletNotReady"}, Drift: []string{}}
}

// TestWriteStatusNodeColumn: the NODE column is the Node's name and
// Ready, NotReady, or - when it was not read; before it, the daemons'
// working set against their kube_reserved_memory, before that the slice's
// CPU time and working set, and before those the capacity its kubelet is
// shown, - when they were not read.
func TestWriteStatusNodeColumn(t *testing.T) {
	var b bytes.Buffer
	st := statusWithNodes()
	st.Partitions[0].Usage = &nodeview.Usage{CPUNanoseconds: 12_340_000_000, MemoryWorkingSetBytes: 512 << 20}
	st.Partitions[0].Machine = &nodeview.Machine{Nodes: "1", CPUs: "4-7", MemTotalBytes: 16 << 30}
	reserved := uint64(500 << 20)
	st.Partitions[0].Daemons = &status.DaemonsUsage{CPUNanoseconds: 3e9, MemoryWorkingSetBytes: 180 << 20, KubeReservedMemoryBytes: &reserved}
	if err := writeStatus(&b, st, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := map[string]string{"node0": "host-node0 Ready", "node1": "host-node1 NotReady", "node2": "host-node2 NotReady", "node3": "host-node3 -", "node4": "-"}
	usage := map[string]string{"node0": "cpu=4,memory=16Gi 12.3s 512Mi 180Mi/500Mi", "node1": "- - - -"}
	header := false
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "PARTITION" {
			header = f[len(f)-1] == "NODE"
		}
		if len(f) >= 11 && want[f[0]] != "" && f[1] == f[0]+".slice" {
			if got := strings.Join(f[10:], " "); got != want[f[0]] {
				t.Errorf("%s: NODE %q, want %q", f[0], got, want[f[0]])
			}
			if w, ok := usage[f[0]]; ok {
				if got := strings.Join(f[6:10], " "); got != w {
					t.Errorf("%s: CAPACITY, CPU TIME, WORKING SET and DAEMONS %q, want %q", f[0], got, w)
				}
				delete(usage, f[0])
			}
			delete(want, f[0])
		}
	}
	if !header || len(want) > 0 || len(usage) > 0 {
		t.Errorf("no NODE column or rows missing %v:\n%s", want, out)
	}
}

// TestStatusJSONKeys: `status --output json` only ever gains fields; a
// partition's keys are the old ones plus node.
func TestStatusJSONKeys(t *testing.T) {
	var b bytes.Buffer
	if err := writeJSON(&b, statusWithNodes()); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Partitions []map[string]json.RawMessage `json:"partitions"`
	}
	if err := json.Unmarshal(b.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	want := []string{"allocator", "effectiveCPUs", "effectiveMems", "kubelet", "name", "node", "nodes", "slice", "units"}
	if got := keys(st.Partitions[0]); !slices.Equal(got, want) {
		t.Errorf("partition keys %v, want %v", got, want)
	}
	var node map[string]json.RawMessage
	if err := json.Unmarshal(st.Partitions[0]["node"], &node); err != nil {
		t.Fatal(err)
	}
	want = []string{"allocatable", "capacity", "condition", "kubeconfig", "message", "name", "ready", "reason"}
	if got := keys(node); !slices.Equal(got, want) {
		t.Errorf("node keys %v, want %v", got, want)
	}
	node = nil // Unmarshal would merge into the old map
	if err := json.Unmarshal(st.Partitions[1]["node"], &node); err != nil {
		t.Fatal(err)
	}
	if _, ok := node["allocatable"]; ok {
		t.Errorf("a Node not read has allocatable: %s", st.Partitions[1]["node"])
	}
}
