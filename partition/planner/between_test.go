package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBetweenTakesPartitionsOneWaveAtATime(t *testing.T) {
	prev := mustPlan(t, seedSpec, "")
	next := mustPlan(t, seedSpec, "[kubelet]\ncpu_manager_policy = \"none\"\n")
	require.NotEqual(t, prev.Partitions[0].Kubelet.CPUManagerPolicy, next.Partitions[0].Kubelet.CPUManagerPolicy)

	mid, err := Between(prev, next, func(p string) bool { return p == "node0" })
	require.NoError(t, err)
	assert.Equal(t, next.Partitions[0], mid.Partitions[0], "node0 is taken: next's")
	assert.Equal(t, prev.Partitions[1], mid.Partitions[1], "node1 is not: still prev's")
	assert.Equal(t, next.Host, mid.Host)

	all, err := Between(prev, next, func(string) bool { return true })
	require.NoError(t, err)
	assert.Equal(t, next, all, "every partition taken: next itself")
	assert.Equal(t, "static", prev.Partitions[1].Kubelet.CPUManagerPolicy, "prev unchanged")
	assert.Equal(t, "none", next.Partitions[1].Kubelet.CPUManagerPolicy, "next unchanged")
}

func TestBetweenRefusesLayoutChanges(t *testing.T) {
	prev := mustPlan(t, seedSpec, "")
	for _, tc := range []struct {
		name, config, want string
	}{
		{"host CPUs", "[host]\nreserved_cpus = \"0-1,4\"\n", "the host's share changes"},
		{"one partition", "[partitioning]\nmode = \"custom\"\ngroups = [[0, 1]]\n", "the number of partitions changes (2 → 1)"},
		{"host name", "[kubelet]\nhostname = \"other\"\n", `the host name changes ("host1" → "other")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := mustPlan(t, seedSpec, tc.config)
			_, err := Between(prev, next, func(string) bool { return true })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// The e2e's reserve step rolls a kube_reserved_memory change (every
// kubelet's reservedMemory moves): a change of the partitions' settings
// only, so Between has the plans on the way.
func TestBetweenKubeReservedMemory(t *testing.T) {
	prev := mustPlan(t, seedSpec, "[kubelet]\nkube_reserved_memory = \"64Mi\"\n")
	next := mustPlan(t, seedSpec, "[kubelet]\nkube_reserved_memory = \"96Mi\"\n")
	require.NotEqual(t, prev.Partitions[0].Kubelet, next.Partitions[0].Kubelet)
	mid, err := Between(prev, next, func(p string) bool { return p == "node0" })
	require.NoError(t, err)
	assert.Equal(t, next.Partitions[0], mid.Partitions[0])
	assert.Equal(t, prev.Partitions[1], mid.Partitions[1])
}
