package nodeview

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

const (
	testView    = "etc/numa-partition/sysfs-p"
	global2M    = GlobalPoolsDir + "/hugepages-2048kB/" + poolFile
	global1G    = GlobalPoolsDir + "/hugepages-1048576kB/" + poolFile
	node1Pool2M = NodesDir + "/node1/hugepages/hugepages-2048kB/" + poolFile
	node2Pool2M = NodesDir + "/node2/hugepages/hugepages-2048kB/" + poolFile
)

// ShowPools binds the view's counts over the pool files the namespace
// shows, read-only; run again after a change of counts it shows the new
// ones, with the previous binds taken off; the host's files are
// untouched.
func TestShowPools(t *testing.T) {
	dir := fakeNodes(t)
	write(t, dir, global2M, "3\n")
	write(t, dir, global1G, "0\n")
	write(t, dir, node1Pool2M, "9\n") // the kernel's: room for the views below
	inOwnProcess(t, "TestShowPoolsChild", "NODEVIEW_POOLS_ROOT="+dir)
	for rel, want := range map[string]string{global2M: "3\n", node1Pool2M: "9\n", node2Pool2M: "2\n"} {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		require.NoError(t, err)
		assert.Equal(t, want, string(b), "the host's %s", rel)
	}
}

func TestShowPoolsChild(t *testing.T) {
	dir := os.Getenv("NODEVIEW_POOLS_ROOT")
	if dir == "" {
		return
	}
	root, err := fsutil.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	// The view is on a filesystem of its own, as /etc is not sysfs.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, testView), 0o755))
	require.NoError(t, unix.Mount("view", filepath.Join(dir, testView), "tmpfs", 0, "size=1m"))
	view := func(counts map[string]string) {
		for rel, n := range counts {
			require.NoError(t, root.MkdirAll(filepath.Dir(filepath.Join(testView, strings.TrimPrefix(rel, "sys/"))), 0o755))
			require.NoError(t, root.WriteFile(filepath.Join(testView, strings.TrimPrefix(rel, "sys/")), []byte(n+"\n"), 0o644))
		}
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	node0Pool2M := NodesDir + "/node0/hugepages/hugepages-2048kB/" + poolFile
	view(map[string]string{global2M: "5", global1G: "0", node0Pool2M: "0", node1Pool2M: "5", node2Pool2M: "0"})

	require.NoError(t, ShowNodes(root, bitmask.MustParseNodeList("1-2"), bitmask.CPUSet{}))
	n, err := ShowPools(root, testView)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "two global pools and one on each shown node")
	assert.Equal(t, "5", read(global2M))
	assert.Equal(t, "0", read(global1G))
	assert.Equal(t, "5", read(node1Pool2M))
	assert.Equal(t, "0", read(node2Pool2M))
	for _, rel := range []string{global2M, node1Pool2M} {
		err := os.WriteFile(filepath.Join(dir, rel), []byte("9"), 0o644)
		assert.True(t, errors.Is(err, syscall.EROFS), "%s: a write is refused: %v", rel, err)
	}

	// The next kubelet start, after a change of counts: the view's files
	// are new (written by rename), and the namespace shows them.
	view(map[string]string{global2M: "7", node1Pool2M: "7"})
	require.NoError(t, ShowNodes(root, bitmask.MustParseNodeList("1-2"), bitmask.CPUSet{}))
	_, err = ShowPools(root, testView)
	require.NoError(t, err)
	assert.Equal(t, "7", read(global2M))
	assert.Equal(t, "7", read(node1Pool2M))
	assert.Equal(t, 1, mountsAt(t, filepath.Join(dir, global2M)), "the previous bind was taken off, not stacked under the new one")

	// A view without a file for a pool the machine has: refused, naming
	// both, before anything is bound.
	require.NoError(t, os.Remove(filepath.Join(dir, testView, strings.TrimPrefix(global1G, "sys/"))))
	view(map[string]string{global2M: "8"})
	_, err = ShowPools(root, testView)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, testView, "kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"))
	assert.Contains(t, err.Error(), "plan and apply again")
	assert.Equal(t, "7", read(global2M), "nothing was bound")

	// A view that shows more pages on a node than its pool holds (the
	// kernel came up short): refused, naming both counts.
	view(map[string]string{global1G: "0", node1Pool2M: "12"})
	_, err = ShowPools(root, testView)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, node1Pool2M)+" holds 9 pages and the partition's hugepage view 12")

	// A link where a view's file should be is refused, not followed.
	view(map[string]string{node1Pool2M: "7"})
	require.NoError(t, os.Remove(filepath.Join(dir, testView, strings.TrimPrefix(global1G, "sys/"))))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(dir, testView, strings.TrimPrefix(global1G, "sys/"))))
	_, err = ShowPools(root, testView)
	require.Error(t, err)
	var link *fsutil.SymlinkError
	assert.ErrorAs(t, err, &link)
}

// mountsAt counts the mounts of the calling namespace at path.
func mountsAt(t *testing.T, path string) int {
	b, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			n++
		}
	}
	return n
}
