package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/kubeletstate"
	"github.com/numa-partition/numa-partition/numa"
)

// The e2e's reboot (issue 37): kubelet-node0 crash-looped on its Memory
// Manager checkpoint, whose node 0 was 44 MiB larger than after the
// reboot. kubelet-state repair, its ExecStartPre=, reads the machine
// (--sysfs) and moves that checkpoint aside, saying why; on the machine
// as checkpointed it leaves it.
func TestKubeletStateRepairAfterAReboot(t *testing.T) {
	sysfs := fixtureSys("qemu-2node-v2")
	topo, err := numa.NewFS(sysfs).Discover()
	require.NoError(t, err)
	node0 := kubeletstate.SizesOf(topo)[0]["memory"]
	checkpoint := func(total uint64) string {
		return fmt.Sprintf(`{"policyName":"Static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":%d}},"cells":[0]}},"checksum":1}`, total)
	}
	for _, tc := range []struct {
		total uint64
		moved bool
	}{{node0, false}, {node0 + 44<<20, true}} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, kubeletstate.MemoryFile), []byte(checkpoint(tc.total)), 0o600))
		out, err := runCLI("--sysfs", sysfs, "kubelet-state", "repair", "--root-dir", dir)
		require.NoError(t, err, out)
		_, statErr := os.Stat(filepath.Join(dir, kubeletstate.MemoryFile+kubeletstate.StaleSuffix))
		assert.Equal(t, tc.moved, statErr == nil, "checkpoint of %d bytes, machine %d", tc.total, node0)
		if tc.moved {
			assert.Contains(t, out, "node 0's memory was ")
			assert.Contains(t, out, "kubernetes/kubernetes#131253")
		} else {
			assert.Empty(t, out)
		}
	}
}
