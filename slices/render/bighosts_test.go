package render

import (
	"testing"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// shapePlan plans a numatest shape as plan does: discovered from its
// synthetic tree, with its config and the examples' host facts in its
// cgroup mode.
func shapePlan(t testing.TB, s numatest.Shape) planner.Plan {
	t.Helper()
	topo, err := numa.NewFS(s.WriteTemp(t)).Discover()
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(s.Name+".toml", []byte(s.Config))
	if err != nil {
		t.Fatal(err)
	}
	facts := planner.ExampleFacts
	facts.Cgroup = s.Cgroup
	p, err := planner.NewPlanFor(topo, facts, c)
	if err != nil {
		t.Fatal(err)
	}
	return *p
}

// TestRenderBigHosts: the big hosts' plans render, a slice, a
// containerd and a kubelet for every partition, and the allocator's
// units.
func TestRenderBigHosts(t *testing.T) {
	for _, s := range append([]numatest.Shape{numatest.GB200MIGOff}, numatest.BigHosts...) {
		t.Run(s.Name, func(t *testing.T) {
			plan := shapePlan(t, s)
			b, err := Render(plan)
			if err != nil {
				t.Fatal(err)
			}
			phases := map[bundle.Phase]int{}
			for _, u := range b.Units {
				if u.Partition != "" {
					phases[u.Phase]++
				}
			}
			for _, ph := range []bundle.Phase{bundle.PhaseSlice, bundle.PhaseRuntime, bundle.PhaseKubelet} {
				if phases[ph] < len(plan.Partitions) {
					t.Errorf("%d units of phase %v for %d partitions: %v", phases[ph], ph, len(plan.Partitions), phases)
				}
			}
		})
	}
}

// benchRenderBigHosts is BenchmarkRender's part for numatest's big
// hosts: their plans, from discovery of their synthetic trees, rendered.
func benchRenderBigHosts(b *testing.B) {
	for _, s := range numatest.BigHosts {
		plan := shapePlan(b, s)
		b.Run(s.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Render(plan); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
