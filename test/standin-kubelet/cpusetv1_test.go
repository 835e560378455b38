package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/stretchr/testify/require"
)

// A directory tree stands in for the cpuset v1 hierarchy: the stand-in
// must create the missing levels from their parents, narrow the leaf and
// move the pod in.
func TestJoinCpusetV1(t *testing.T) {
	root := t.TempDir()
	write := func(rel, v string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(v), 0o644))
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		return string(b)
	}
	write("cpuset/cpuset.cpus", "0-3\n")
	write("cpuset/cpuset.mems", "0-1\n")
	write("cpuset/node0.slice/cpuset.cpus", "0-1\n") // written by numa-partition apply
	write("cpuset/node0.slice/cpuset.mems", "0\n")

	joined, err := joinCpusetV1(root, "/node0.slice/node0-kubepods.slice/standin-pod-node0.scope", 42, bitmask.MustParseCPUList("1"), true)
	require.NoError(t, err)
	require.True(t, joined)
	require.Equal(t, "0-1\n", read("cpuset/node0.slice/node0-kubepods.slice/cpuset.cpus"))
	require.Equal(t, "0\n", read("cpuset/node0.slice/node0-kubepods.slice/cpuset.mems"))
	leaf := "cpuset/node0.slice/node0-kubepods.slice/standin-pod-node0.scope/"
	require.Equal(t, "1", read(leaf+"cpuset.cpus"))
	require.Equal(t, "0\n", read(leaf+"cpuset.mems"))
	require.Equal(t, "42", read(leaf+"cgroup.procs"))
}

func TestJoinCpusetV1WithoutHierarchy(t *testing.T) {
	_, err := joinCpusetV1(t.TempDir(), "/a.slice/x.scope", 1, bitmask.CPUSet{}, false)
	require.ErrorContains(t, err, "without a cpuset hierarchy")
}
