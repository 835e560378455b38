package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// A plan planned again with its own figures, on a machine whose memory
// and pid limit have moved since (a reboot), is the plan itself; with
// the machine's figures it is not. The wrapped facts still answer their
// cgroup mode and interfaces, which decide what each kubelet is shown.
func TestFiguresPlanAgainAsReviewed(t *testing.T) {
	c := &config.Config{Kubelet: config.KubeletConfig{Hostname: "h",
		KubeletOverrides: config.KubeletOverrides{KubeReservedMemory: "64Mi", SystemReservedMemory: "64Mi", EvictionHardMemory: "64Mi"}}}
	facts := ExampleFacts
	facts.Tasks = 31872
	facts.Cgroup = cgroupmode.V2
	topo := discoverFixture(t, "qemu-2node-v2")
	reviewed, err := NewPlanFor(topo, facts, c)
	require.NoError(t, err)

	moved := *topo
	moved.Nodes = append(moved.Nodes[:0:0], topo.Nodes...)
	moved.Nodes[1].MemoryBytes -= 44 << 20
	movedFacts := facts
	movedFacts.Tasks = 31104
	now, err := NewPlanFor(&moved, movedFacts, c)
	require.NoError(t, err)
	require.NotEqual(t, reviewed, now, "the figures moved")

	f := FiguresOf(reviewed)
	assert.Equal(t, uint64(31872), f.TaskLimit)
	assert.Equal(t, topo.Nodes[1].MemoryBytes, f.NodeMemory[1])
	again, err := NewPlanFor(f.Topology(&moved), f.Facts(movedFacts), c)
	require.NoError(t, err)
	assert.Equal(t, reviewed, again)
	assert.Equal(t, topo.Nodes[1].MemoryBytes-44<<20, moved.Nodes[1].MemoryBytes, "the topology given is unchanged")

	mode, err := f.Facts(movedFacts).(CgroupFacts).CgroupMode()
	require.NoError(t, err)
	assert.Equal(t, cgroupmode.V2, mode)
}

// A plan made without host facts has no pid limit: the facts stay
// those given.
func TestFiguresWithoutALimitKeepTheFacts(t *testing.T) {
	f := Figures{}
	assert.Equal(t, HostFacts(ExampleFacts), f.Facts(ExampleFacts))
	assert.Nil(t, f.Facts(nil))
}
