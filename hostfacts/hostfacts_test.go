package hostfacts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestFilesystem(t *testing.T) {
	dir := t.TempDir()
	var sf unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &sf))
	fs, err := Live.Filesystem(dir)
	require.NoError(t, err)
	mount, err := exec.Command("findmnt", "-n", "-o", "TARGET", "--target", dir).Output()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(mount)), fs.Path, "named by its mount point, as findmnt says")
	assert.Equal(t, uint64(sf.Frsize)*sf.Blocks, fs.CapacityBytes, "cadvisor's capacity: f_frsize × f_blocks")
	assert.NotZero(t, fs.CapacityBytes)

	// A root dir apply has not created yet is on its nearest ancestor's
	// filesystem.
	later, err := Live.Filesystem(filepath.Join(dir, "kubelet-node0", "pods"))
	require.NoError(t, err)
	assert.Equal(t, fs, later)

	_, err = Live.Filesystem("var/lib/kubelet")
	assert.ErrorContains(t, err, "not an absolute path")
}

func TestTaskLimit(t *testing.T) {
	proc := func(t *testing.T, pidMax, threadsMax string) Host {
		root := t.TempDir()
		kernel := filepath.Join(root, "sys", "kernel")
		require.NoError(t, os.MkdirAll(kernel, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(kernel, "pid_max"), []byte(pidMax), 0o644))
		if threadsMax != "" {
			require.NoError(t, os.WriteFile(filepath.Join(kernel, "threads-max"), []byte(threadsMax), 0o644))
		}
		return Host{Proc: root}
	}
	n, err := proc(t, "4194304\n", "254528\n").TaskLimit()
	require.NoError(t, err)
	assert.Equal(t, uint64(254528), n, "the lower of pid_max and threads-max, as kubelet counts")

	_, err = proc(t, "lots\n", "1\n").TaskLimit()
	assert.ErrorContains(t, err, `pid_max: "lots" is not a positive integer`)
	_, err = proc(t, "32768\n", "").TaskLimit()
	assert.ErrorContains(t, err, "threads-max")

	live, err := Live.TaskLimit()
	require.NoError(t, err)
	assert.NotZero(t, live)
}
