package kubeletstate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Checkpoints as kubelet 1.37.2 writes them (the e2e's partition node0:
// CPU 1 its one pod CPU, 0 and 2-3 reserved).
const (
	exhausted = `{"policyName":"static","defaultCpuSet":"","entries":{"49838f6e-55d3-42f8-b729-56ee4d3a2e13":{"work":"1"}},"checksum":1424315497}`
	shared    = `{"policyName":"static","defaultCpuSet":"1","checksum":2891387436}`
	fresh     = `{"policyName":"static","defaultCpuSet":"","checksum":14413152}`
	none      = `{"policyName":"none","defaultCpuSet":"","checksum":1353318690}`
)

func TestRepairSharedPool(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		moved         bool
		pods          []string
	}{
		{"every pod CPU assigned: kubelet would refuse", exhausted, true, []string{"49838f6e-55d3-42f8-b729-56ee4d3a2e13"}},
		{"a shared CPU left", shared, false, nil},
		{"no assignment, empty pool: kubelet initialises it", fresh, false, nil},
		{"policy none", none, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, CPUFile), []byte(tc.content), 0o644))
			rep, err := RepairSharedPool(dir)
			require.NoError(t, err)
			assert.Equal(t, tc.moved, rep.Moved)
			assert.Equal(t, tc.pods, rep.Pods)
			_, errOld := os.Stat(filepath.Join(dir, CPUFile))
			b, errStale := os.ReadFile(filepath.Join(dir, CPUFile+StaleSuffix))
			if tc.moved {
				assert.ErrorIs(t, errOld, os.ErrNotExist)
				require.NoError(t, errStale)
				assert.Equal(t, tc.content, string(b), "the checkpoint is kept aside as it was")
			} else {
				assert.NoError(t, errOld)
				assert.ErrorIs(t, errStale, os.ErrNotExist)
			}
		})
	}
}

func TestRepairSharedPoolNoCheckpoint(t *testing.T) {
	rep, err := RepairSharedPool(t.TempDir())
	require.NoError(t, err)
	assert.False(t, rep.Moved)
}

// Not a checkpoint: an error naming the file, and the file stays for
// kubelet to judge.
func TestRepairSharedPoolGarbage(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, CPUFile), []byte("{not json"), 0o644))
	_, err := RepairSharedPool(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, CPUFile))
	assert.FileExists(t, filepath.Join(dir, CPUFile))
}

// A symlinked checkpoint is not followed out of the root dir.
func TestRepairSharedPoolSymlink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "state")
	require.NoError(t, os.WriteFile(target, []byte(exhausted), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, CPUFile)))
	_, err := RepairSharedPool(dir)
	require.Error(t, err)
	b, rerr := os.ReadFile(target)
	require.NoError(t, rerr)
	assert.Equal(t, exhausted, string(b))
}
