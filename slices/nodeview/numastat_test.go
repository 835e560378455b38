package nodeview

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A v2 memory.numa_stat as kernel 6.1 writes it (the e2e VM's, trimmed):
// shmem, the LRU lists and THP are inside anon and file, and the
// workingset lines are event counts, not bytes.
const numaStat = `anon N0=1000 N1=200000
file N0=3000 N1=400000
kernel_stack N0=16384 N1=32768
pagetables N0=4096 N1=8192
sec_pagetables N0=0 N1=0
shmem N0=3000 N1=100000
file_mapped N0=0 N1=50000
anon_thp N0=0 N1=2097152
inactive_anon N0=500 N1=100000
active_file N0=3000 N1=300000
slab_reclaimable N0=800 N1=1600
slab_unreclaimable N0=200 N1=400
workingset_refault_anon N0=18446744073709551615 N1=0
`

func TestParseNumaStat(t *testing.T) {
	got, err := ParseNumaStat([]byte(numaStat))
	require.NoError(t, err)
	assert.Equal(t, map[int]uint64{0: 1000 + 3000 + 16384 + 4096 + 800 + 200, 1: 200000 + 400000 + 32768 + 8192 + 1600 + 400}, got,
		"anon, file, kernel stacks, page tables and slab; nothing counted twice, event counts left out")

	for _, bad := range []string{"anon", "anon N0", "anon X0=1", "anon N-1=1", "anon N0=x", "anon N0=18446744073709551615"} {
		_, err := ParseNumaStat([]byte(bad + "\n"))
		assert.Error(t, err, "%q", bad)
	}
}

// The e2e's v2 boot: node 0 held the VM's in-memory root file system
// outside node0.slice; what the slice is charged and the hugepage pools
// are not the host's.
func TestHostMemoryOn(t *testing.T) {
	const mi = 1 << 20
	nodes := []NodeUse{{Node: 0, TotalBytes: 1950 * mi, FreeBytes: 370 * mi, HugeBytes: 32 * mi}}
	assert.Equal(t, uint64(900*mi), HostMemoryOn(nodes, map[int]uint64{0: 648 * mi, 1: 5000 * mi}),
		"another node's charge is not this one's")
	assert.Equal(t, uint64(0), HostMemoryOn(nodes, map[int]uint64{0: 4000 * mi}), "never below 0")
	two := append(nodes, NodeUse{Node: 1, TotalBytes: 2000 * mi, FreeBytes: 1000 * mi})
	assert.Equal(t, uint64(1100*mi), HostMemoryOn(two, map[int]uint64{0: 648 * mi, 1: 800 * mi}))
}
