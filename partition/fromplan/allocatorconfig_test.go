package fromplan

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// The 4-socket Opteron dump and its example config: partition "lowlat" is
// NUMA nodes 6-7 with single-numa-node, the host keeps 1100Mi on node 6.
func allocatorFixturePlan(t *testing.T) (*planner.Plan, *numa.Topology) {
	t.Helper()
	topo, err := numa.NewFS(filepath.Join("..", "..", "testdata", "sysfs", "hwloc-32amd64-4s2n4c-cgroup2", "sys")).Discover()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadFile("../../examples/4socket/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planner.NewPlan(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return plan, topo
}

func TestAllocatorConfig(t *testing.T) {
	plan, topo := allocatorFixturePlan(t)
	var lowlat planner.Partition
	for _, p := range plan.Partitions {
		if p.Name == "lowlat" {
			lowlat = p
		}
	}
	cfg, err := AllocatorConfig(lowlat, topo)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy != "single-numa-node" || cfg.Scope != lowlat.Kubelet.TopologyManagerScope || cfg.Scope == "" {
		t.Fatalf("policy %q scope %q", cfg.Policy, cfg.Scope)
	}
	if len(cfg.Nodes) != 2 || cfg.Nodes[0].ID != 6 || cfg.Nodes[1].ID != 7 {
		t.Fatalf("nodes %+v, want 6 and 7", cfg.Nodes)
	}
	for _, n := range cfg.Nodes {
		tn, _ := topo.Node(n.ID)
		if n.Memory != tn.MemoryBytes {
			t.Fatalf("node %d memory %d, topology says %d", n.ID, n.Memory, tn.MemoryBytes)
		}
		for _, other := range cfg.Nodes {
			m := other.ID
			if d, _ := topo.Distance(n.ID, m); cfg.Distances[n.ID][m] != d {
				t.Fatalf("distance %d-%d: %d, topology %d", n.ID, m, cfg.Distances[n.ID][m], d)
			}
		}
	}
	if got := cfg.Nodes[0].Reserved[allocator.ResourceMemory]; got != 1100<<20 {
		t.Fatalf("node 6 reserved %d, want 1100Mi", got)
	}
	if got := cfg.Nodes[1].Reserved[allocator.ResourceMemory]; got != 0 {
		t.Fatalf("node 7 reserved %d, want 0", got)
	}
	if _, err := allocator.New(cfg); err != nil {
		t.Fatalf("the allocator refuses the config from the plan: %v", err)
	}
}

func TestAllocatorConfigBadOptions(t *testing.T) {
	plan, topo := allocatorFixturePlan(t)
	for opt, val := range map[string]string{"prefer-closest-numa-nodes": "maybe", "max-allowable-numa-nodes": "-1"} {
		p := plan.Partitions[0]
		p.Kubelet.TopologyManagerOptions = map[string]string{opt: val}
		if _, err := AllocatorConfig(p, topo); err == nil || !strings.Contains(err.Error(), opt) {
			t.Fatalf("%s=%s: got %v", opt, val, err)
		}
	}
	p := plan.Partitions[0]
	p.Kubelet.TopologyManagerOptions = map[string]string{"prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "16"}
	cfg, err := AllocatorConfig(p, topo)
	if err != nil || !cfg.PreferClosestNUMA || cfg.MaxAllowableNUMANodes != 16 {
		t.Fatalf("got %+v %v", cfg, err)
	}
}

// A node whose memory moved since the plan (a reboot: the e2e's VM lost
// 44 MiB on node 1) is counted as the machine has it now, and named by
// MemoryDrift; a plan that matches the machine has no drift.
func TestMemoryDriftAfterAReboot(t *testing.T) {
	plan, topo := allocatorFixturePlan(t)
	p := plan.Partitions[0]
	if drift := MemoryDrift(p, topo); len(drift) != 0 {
		t.Fatalf("drift on the machine the plan was made on: %q", drift)
	}
	node := p.Memory[0].Node
	tn, _ := topo.Node(node)
	planned := tn.MemoryBytes
	tn.MemoryBytes -= 44 << 20
	cfg, err := AllocatorConfig(p, topo)
	if err != nil {
		t.Fatalf("a node 44 MiB smaller after a reboot: %v", err)
	}
	if cfg.Nodes[0].Memory != planned-44<<20 {
		t.Fatalf("node %d memory %d, want the machine's %d", node, cfg.Nodes[0].Memory, planned-44<<20)
	}
	drift := MemoryDrift(p, topo)
	if len(drift) != 1 || !strings.Contains(drift[0], fmt.Sprintf("node %d has ", node)) || !strings.Contains(drift[0], "run plan again") {
		t.Fatalf("drift %q", drift)
	}
}
