package kubeletstate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Memory Manager checkpoint as kubelet 1.37.2 writes it (the e2e's
// partition node0: node 0, 2,062,884 kB, 16 × 2Mi pages, one pinned pod).
const pinnedMemory = `{"policyName":"Static","machineState":{"0":{"numberOfAssignments":2,"memoryMap":{` +
	`"hugepages-1Gi":{"total":0,"systemReserved":0,"allocatable":0,"reserved":0,"free":0},` +
	`"hugepages-2Mi":{"total":33554432,"systemReserved":0,"allocatable":33554432,"reserved":8388608,"free":25165824},` +
	`"memory":{"total":2112393216,"systemReserved":436207616,"allocatable":1642631168,"reserved":67108864,"free":1575522304}},"cells":[0]}},` +
	`"entries":{"f2538fbc-3273-4f67-a5ba-39e6d706e643":{"work":[{"numaAffinity":[0],"type":"memory","size":67108864},` +
	`{"numaAffinity":[0],"type":"hugepages-2Mi","size":8388608}]}},"checksum":1}`

// The e2e's reboot (issue 37): node 0's MemTotal moved and kubelet-node0
// restarted 5 times in a row ("the expected machine state is different
// from the real one", kubernetes#131253). The checkpoint is moved aside
// when its machine is not the machine now, and only then.
func TestRepairMemoryMachine(t *testing.T) {
	machine := func(memory, pages2Mi uint64) NodeSizes {
		return NodeSizes{0: {"memory": memory, "hugepages-2Mi": pages2Mi << 21, "hugepages-1Gi": 0}, 1: {"memory": 1 << 31}}
	}
	for _, tc := range []struct {
		name, content string
		now           NodeSizes
		why           string
	}{
		{"the machine as checkpointed", pinnedMemory, machine(2112393216, 16), ""},
		{"node 0 lost 44 MiB in a reboot", pinnedMemory, machine(2112393216-44<<20, 16), "node 0's memory was 2062884Ki, is 2017828Ki"},
		{"its 2Mi pool is 8 pages", pinnedMemory, machine(2112393216, 8), "node 0's hugepages-2Mi was 32Mi, is 16Mi"},
		{"node 0 gone", pinnedMemory, NodeSizes{1: {"memory": 1 << 31}}, "node 0 is not on this machine"},
		{"policy None keeps no machine", `{"policyName":"None","machineState":{},"checksum":1}`, machine(1, 0), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, MemoryFile), []byte(tc.content), 0o644))
			rep, err := RepairMemoryMachine(dir, func() (NodeSizes, error) { return tc.now, nil })
			require.NoError(t, err)
			assert.Equal(t, tc.why, rep.Why)
			assert.Equal(t, tc.why != "", rep.Moved)
			_, errOld := os.Stat(filepath.Join(dir, MemoryFile))
			_, errStale := os.Stat(filepath.Join(dir, MemoryFile+StaleSuffix))
			if tc.why != "" {
				assert.True(t, os.IsNotExist(errOld), "moved away")
				assert.NoError(t, errStale, "kept beside it")
				assert.Equal(t, []string{"f2538fbc-3273-4f67-a5ba-39e6d706e643"}, rep.Pods)
			} else {
				assert.NoError(t, errOld, "left in place")
			}
		})
	}
	dir := t.TempDir()
	rep, err := RepairMemoryMachine(dir, func() (NodeSizes, error) { return machine(1, 0), nil })
	require.NoError(t, err, "no checkpoint: nothing to do")
	assert.False(t, rep.Moved)
	require.NoError(t, os.WriteFile(filepath.Join(dir, MemoryFile), []byte("{"), 0o644))
	_, err = RepairMemoryMachine(dir, func() (NodeSizes, error) { return machine(1, 0), nil })
	assert.ErrorContains(t, err, "is not a kubelet Memory Manager checkpoint")
}
