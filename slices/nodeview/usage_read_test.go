package nodeview

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

func TestReadUsageV2(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sys/fs/cgroup/node0.slice/cpu.stat", "usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n")
	write(t, dir, "sys/fs/cgroup/node0.slice/memory.stat", "anon 1000\nfile 4000\ninactive_file 1500\nactive_file 2500\n")
	u, err := ReadUsage(fsutil.NewRoot(dir), true, "node0.slice")
	require.NoError(t, err)
	assert.Equal(t, Usage{CPUNanoseconds: 2500000, MemoryUsageBytes: 5000, MemoryWorkingSetBytes: 3500, MemoryAnonBytes: 1000}, u)
}

func TestReadUsageV1(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sys/fs/cgroup/cpuacct/node0.slice/cpuacct.usage", "123456789\n")
	write(t, dir, "sys/fs/cgroup/memory/node0.slice/memory.usage_in_bytes", "8000\n")
	write(t, dir, "sys/fs/cgroup/memory/node0.slice/memory.stat", "cache 100\nrss 70\ninactive_file 50\ntotal_rss 2500\ntotal_inactive_file 3000\n")
	u, err := ReadUsage(fsutil.NewRoot(dir), false, "node0.slice")
	require.NoError(t, err)
	assert.Equal(t, Usage{CPUNanoseconds: 123456789, MemoryUsageBytes: 8000, MemoryWorkingSetBytes: 5000, MemoryAnonBytes: 2500}, u)
}

func TestReadUsageNamesWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sys/fs/cgroup/node0.slice/cpu.stat", "usage_usec lots\n")
	_, err := ReadUsage(fsutil.NewRoot(dir), true, "node0.slice")
	assert.ErrorContains(t, err, filepath.Join(dir, "sys/fs/cgroup/node0.slice/cpu.stat")+` line 1 "usage_usec lots"`)
	_, err = ReadUsage(fsutil.NewRoot(dir), false, "node0.slice")
	assert.ErrorContains(t, err, "cpuacct.usage")
}
