package applytest

import (
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/render"
)

// BigHost is a shape's tree, plan (with the examples' host facts in the
// shape's cgroup mode) and bundle.
type BigHost struct {
	Mode   cgroupmode.Mode
	Sysfs  string
	Plan   *planner.Plan
	Bundle bundle.Bundle
}

// NewBigHost is the BigHost of shape s (numatest.BigHosts), its sysfs
// tree in a temporary directory of t.
func NewBigHost(t testing.TB, s numatest.Shape) BigHost {
	t.Helper()
	h := BigHost{Mode: s.Cgroup, Sysfs: s.WriteTemp(t)}
	topo, err := numa.NewFS(h.Sysfs).Discover()
	Must(t, err)
	c, err := config.Parse(s.Name+".toml", []byte(s.Config))
	Must(t, err)
	facts := planner.ExampleFacts
	facts.Cgroup = s.Cgroup
	h.Plan, err = planner.NewPlanFor(topo, facts, c)
	Must(t, err)
	h.Bundle, err = render.Render(*h.Plan)
	Must(t, err)
	return h
}
