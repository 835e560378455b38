package transaction

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeProcs(t *testing.T, root, hierarchy, cgroup, content string) string {
	t.Helper()
	dir := filepath.Join(root, "sys/fs/cgroup", hierarchy, cgroup)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, "cgroup.procs")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestCgroupProcs(t *testing.T) {
	root := t.TempDir()
	writeProcs(t, root, "", "/node0.slice/containerd-node0.service", "12\n34\n")
	writeProcs(t, root, "systemd", "/node1.slice/containerd-node1.service", "56\n")
	writeProcs(t, root, "", "/bad.service", "12\nx\n")

	pids, err := cgroupProcs(root, CgroupV2, "/node0.slice/containerd-node0.service")
	require.NoError(t, err)
	assert.Equal(t, []int{12, 34}, pids)
	pids, err = cgroupProcs(root, CgroupHybrid, "/node1.slice/containerd-node1.service")
	require.NoError(t, err)
	assert.Equal(t, []int{56}, pids, "v1 and hybrid read systemd's named hierarchy")
	pids, err = cgroupProcs(root, CgroupV2, "/gone.service")
	require.NoError(t, err)
	assert.Empty(t, pids, "a cgroup that is not there has no processes")
	_, err = cgroupProcs(root, CgroupV2, "/bad.service")
	assert.ErrorContains(t, err, `"x" is not a pid`)
}

// TestKillLeftovers: a process left in a stopped unit's cgroup is SIGKILLed
// and waited for (the test empties the cgroup file as the kernel would).
func TestKillLeftovers(t *testing.T) {
	root := t.TempDir()
	shim := exec.Command("sleep", "60")
	require.NoError(t, shim.Start())
	procs := writeProcs(t, root, "", "/node0.slice/containerd-node0.service", strconv.Itoa(shim.Process.Pid)+"\n")
	exited := make(chan error, 1)
	go func() {
		err := shim.Wait()
		_ = os.WriteFile(procs, nil, 0o644) // the kernel drops the dead
		exited <- err
	}()

	pids, err := KillLeftovers(context.Background(), root, CgroupV2, "/node0.slice/containerd-node0.service")
	require.NoError(t, err)
	assert.Equal(t, []int{shim.Process.Pid}, pids)
	werr := <-exited
	var ee *exec.ExitError
	require.True(t, errors.As(werr, &ee), "sleep was not killed: %v", werr)
	assert.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())

	pids, err = KillLeftovers(context.Background(), root, CgroupV2, "/node0.slice/containerd-node0.service")
	require.NoError(t, err)
	assert.Empty(t, pids, "nothing left: nothing to kill")
}
