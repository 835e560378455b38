package render

import (
	"testing"

	"github.com/numa-partition/numa-partition/slices/bundle"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner"
)

// shownPartitions is seedPlan with every node's hugepage sizes known, so
// that each kubelet is shown its own partition (kubeletgen.MachineOf).
func shownPartitions() planner.Plan {
	plan := seedPlan()
	for i := range plan.Partitions {
		for j := range plan.Partitions[i].Memory {
			plan.Partitions[i].Memory[j].PageSizes = []uint64{2 * mi, gi}
		}
	}
	return plan
}

// A node whose memory moved (a reboot) is in no file rendered for kubelets
// shown their partitions, only in the plan's own copy: SameHost. Where a
// kubelet is shown the whole machine, the node's size is that kubelet's
// reservedMemory there, and a change to what is rendered (a kubelet's
// maxPods) is never the same host.
func TestSameHost(t *testing.T) {
	render := func(edit func(*planner.Plan), base func() planner.Plan) bundle.Bundle {
		plan := base()
		edit(&plan)
		b, err := Render(plan)
		require.NoError(t, err)
		return b
	}
	same := func(*planner.Plan) {}
	moved := func(p *planner.Plan) { p.Partitions[0].Memory[0].TotalBytes -= 44 << 20 }
	morePods := func(p *planner.Plan) { p.Partitions[0].Kubelet.MaxPods++ }

	a, b := render(same, shownPartitions), render(moved, shownPartitions)
	assert.True(t, SameHost(a, b), "a node's memory size, kubelets shown their partitions")
	assert.NotEqual(t, planFile(t, a), planFile(t, b), "the plans' own copies differ")
	assert.False(t, SameHost(a, render(morePods, shownPartitions)), "maxPods is in the kubelet's config")
	assert.False(t, SameHost(render(same, seedPlan), render(moved, seedPlan)), "kubelets shown the whole machine reserve the other node's size")
}

func planFile(t *testing.T, b bundle.Bundle) string {
	for _, f := range b.Files {
		if f.Path == bundle.PlanPath {
			return string(f.Content)
		}
	}
	t.Fatalf("no %s in the bundle", bundle.PlanPath)
	return ""
}
