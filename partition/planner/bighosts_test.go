package planner

import (
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// discoverShape discovers a numatest shape from its synthetic tree and
// parses the config it is planned with.
func discoverShape(t testing.TB, s numatest.Shape) (*numa.Topology, *config.Config) {
	t.Helper()
	topo, err := numa.NewFS(s.WriteTemp(t)).Discover()
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(s.Name+".toml", []byte(s.Config))
	if err != nil {
		t.Fatal(err)
	}
	return topo, c
}

// shapeFacts are the examples' declared host in the shape's cgroup mode.
func shapeFacts(s numatest.Shape) FixedFacts {
	f := ExampleFacts
	f.Cgroup = s.Cgroup
	return f
}

// TestPlanBigHosts: the big hosts plan as their configs say, with the
// invariants: the 512-thread hosts one partition per node, placed by
// kubelet; the GB200 tray one per Grace with its 16 GPU-memory nodes,
// placed by the allocator (nri mode above 8 nodes); with MIG off, its
// 28 empty nodes left out with a warning each. The allocator's shapes
// are one partition of 16, 34 and 64 nodes.
func TestPlanBigHosts(t *testing.T) {
	type want struct {
		shape      numatest.Shape
		partitions int
		nodes      int // each partition's
		mode       string
		emptyWarns int
	}
	cases := []want{
		{numatest.SNC3, 6, 1, config.AllocatorModeKubelet, 0},
		{numatest.NPS4, 8, 1, config.AllocatorModeKubelet, 0},
		{numatest.GB200, 2, 17, config.AllocatorModeNRI, 0},
		{numatest.GB200MIGOff, 2, 3, config.AllocatorModeKubelet, 28},
	}
	for _, n := range []int{16, 34, 64} {
		s, err := numatest.AllocatorShape(n)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, want{s, 1, n, config.AllocatorModeNRI, 0})
	}
	for _, tc := range cases {
		t.Run(tc.shape.Name, func(t *testing.T) {
			topo, c := discoverShape(t, tc.shape)
			p, err := NewPlanFor(topo, shapeFacts(tc.shape), c)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, topo, p)
			if len(p.Partitions) != tc.partitions {
				t.Fatalf("%d partitions, want %d", len(p.Partitions), tc.partitions)
			}
			for _, part := range p.Partitions {
				if part.Nodes.Len() != tc.nodes || part.Allocator.Mode != tc.mode {
					t.Errorf("partition %s: nodes %s, allocator mode %s; want %d nodes, %s", part.Name, part.Nodes, part.Allocator.Mode, tc.nodes, tc.mode)
				}
				// Whoever places the containers is allowed the machine's
				// nodes: in nri mode the allocator, which refuses more
				// than 8 without the option, as kubelet does.
				opts, err := part.Kubelet.TopologyPolicyOptions()
				if part.Allocator.Mode == config.AllocatorModeNRI {
					opts, err = part.Allocator.TopologyPolicyOptions()
				}
				if err != nil || (len(topo.Nodes) > 8 && opts.MaxAllowableNUMANodes != len(topo.Nodes)) {
					t.Errorf("partition %s (%s mode): max-allowable-numa-nodes %d for a machine of %d nodes (%v)", part.Name, part.Allocator.Mode, opts.MaxAllowableNUMANodes, len(topo.Nodes), err)
				}
			}
			empty := 0
			for _, w := range p.Warnings {
				if strings.Contains(w, "has neither online CPUs nor memory") {
					empty++
				}
			}
			if empty != tc.emptyWarns {
				t.Errorf("%d warnings of empty nodes, want %d: %q", empty, tc.emptyWarns, p.Warnings)
			}
		})
	}
}
