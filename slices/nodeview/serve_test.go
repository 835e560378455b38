package nodeview

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
)

func needFUSE(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: mounting FUSE needs root (make test runs as root in CI)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("SKIPPED LOUDLY: no /dev/fuse here: %v", err)
	}
}

func serve(t *testing.T, render Render) string {
	t.Helper()
	dir := t.TempDir()
	srv, err := Serve(dir, map[string]Render{MeminfoFile: render})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Unmount()) })
	return filepath.Join(dir, MeminfoFile)
}

// Each open reads what render makes then, whole, however long: the file
// is live and has no size to cut it at.
func TestServeIsLive(t *testing.T) {
	needFUSE(t)
	var opens atomic.Int64
	long := strings.Repeat("x", 200<<10)
	file := serve(t, func() ([]byte, error) {
		return fmt.Appendf(nil, "open %d\n%s\n", opens.Add(1), long), nil
	})
	for i := 1; i <= 3; i++ {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("open %d\n%s\n", i, long), string(b))
	}
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o444), fi.Mode().Perm())
	_, err = os.OpenFile(file, os.O_WRONLY, 0)
	assert.True(t, errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES), "a write open is refused: %v", err)
}

// A render that fails is the reader's EIO, not a short or stale file.
func TestServeFailsReadsWhenRenderFails(t *testing.T) {
	needFUSE(t)
	file := serve(t, func() ([]byte, error) { return nil, errors.New("node 1's meminfo is gone") })
	_, err := os.ReadFile(file)
	assert.True(t, errors.Is(err, syscall.EIO), "want EIO, got %v", err)
}

// On this machine: the view of its node 0 is node 0's memory, read live
// through the mount, in /proc/meminfo's lines.
func TestServeThisMachinesNode(t *testing.T) {
	needFUSE(t)
	b, err := os.ReadFile("/sys/devices/system/node/node0/meminfo")
	if err != nil {
		t.Skipf("SKIPPED LOUDLY: this machine has no node0 meminfo: %v", err)
	}
	node0, err := numa.ParseNodeMeminfo(0, string(b))
	require.NoError(t, err)
	file := serve(t, openSource(t, "/").Nodes([]int{0}))
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.EqualValues(t, node0["MemTotal"]>>10, kB(t, string(got), "MemTotal"))
	host, err := os.ReadFile("/proc/meminfo")
	require.NoError(t, err)
	assert.Equal(t, strings.Count(string(host), "\n"), strings.Count(string(got), "\n"), "every line of the host's")
}

func TestLiveMeminfoNamesWhatFails(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "proc/meminfo", hostMeminfo)
	write(t, dir, "sys/devices/system/node/node0/meminfo", nodeMeminfos[0])
	write(t, dir, "sys/devices/system/node/node1/meminfo", "Node 0 MemTotal: 1 kB\n")
	src := openSource(t, dir)
	b, err := src.Nodes([]int{0})()
	require.NoError(t, err)
	assert.EqualValues(t, 4000000, kB(t, string(b), "MemTotal"))
	_, err = src.Nodes([]int{0, 1})()
	assert.ErrorContains(t, err, filepath.Join(dir, "sys/devices/system/node/node1/meminfo"))
	_, err = src.Nodes([]int{2})()
	assert.ErrorContains(t, err, "node2/meminfo")
}

func openSource(t *testing.T, dir string) *MeminfoSource {
	t.Helper()
	src, err := OpenMeminfoSource(fsutil.NewRoot(dir))
	require.NoError(t, err)
	t.Cleanup(func() { src.Close() })
	return src
}

// The host's /proc/meminfo is read through the file opened first, so a
// view bound over its path later (the holder serves one there) is never
// read in its place, and the file is read afresh each time.
func TestMeminfoSourceReadsTheFileItOpened(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "proc/meminfo", hostMeminfo)
	write(t, dir, "sys/devices/system/node/node0/meminfo", nodeMeminfos[0])
	src := openSource(t, dir)
	first, err := src.Nodes([]int{0})()
	require.NoError(t, err)
	// Another file now at the path, as a bind would put there.
	require.NoError(t, os.Rename(filepath.Join(dir, "proc/meminfo"), filepath.Join(dir, "proc/meminfo.host")))
	write(t, dir, "proc/meminfo", "the view\n")
	again, err := src.Nodes([]int{0})()
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again))
}

// ServeOver: the file is read live at the target, and nothing is left
// mounted or made anywhere else. go-fuse mounts from a thread of its own,
// so the test runs whole in a process of its own mount namespace (a
// locked thread's namespace would not see the mount).
func TestServeOverBindsLiveAndLeavesNothingElse(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	write(t, dir, "proc/meminfo", "the host's\n")
	write(t, dir, "sys/fs/cgroup/memory/memory.stat", "the host's\n")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "run"), 0o755))
	inOwnProcess(t, "TestServeOverChild", "NODEVIEW_SERVEOVER_ROOT="+dir)
	// Outside the namespace the host's files are untouched.
	for _, f := range []string{"proc/meminfo", "sys/fs/cgroup/memory/memory.stat"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, "the host's\n", string(b), f)
	}
}

// TestServeOverChild is TestServeOverBindsLiveAndLeavesNothingElse's
// process, in its own mount namespace; alone it does nothing.
func TestServeOverChild(t *testing.T) {
	dir := os.Getenv("NODEVIEW_SERVEOVER_ROOT")
	if dir == "" {
		return
	}
	root, err := fsutil.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	var opens, stats atomic.Int64
	srv, err := ServeOver(root, map[string]Render{
		"proc/meminfo": func() ([]byte, error) {
			return fmt.Appendf(nil, "open %d\n", opens.Add(1)), nil
		},
		"sys/fs/cgroup/memory/memory.stat": func() ([]byte, error) {
			return fmt.Appendf(nil, "stat %d\n", stats.Add(1)), nil
		},
	})
	require.NoError(t, err)
	for i := 1; i <= 2; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "proc/meminfo"))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("open %d\n", i), string(b))
		b, err = os.ReadFile(filepath.Join(dir, "sys/fs/cgroup/memory/memory.stat"))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("stat %d\n", i), string(b))
	}
	left, err := os.ReadDir(filepath.Join(dir, "run"))
	require.NoError(t, err)
	assert.Empty(t, left, "the mount directory is gone")
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(mounts), "numa-partition-view"), "two mounts: the binds over the targets")
	// The binds are the filesystem's last mounts: taking them away ends
	// the server.
	require.NoError(t, unix.Unmount(filepath.Join(dir, "sys/fs/cgroup/memory/memory.stat"), 0))
	require.NoError(t, unix.Unmount(filepath.Join(dir, "proc/meminfo"), 0))
	ended := make(chan struct{})
	go func() { srv.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the server still runs 30 s after its last mount went")
	}
}

// The holder's own case: the view of the shown nodes served over the very
// /proc/meminfo it is made from. Read by path, the host's file would be
// the view itself, a request the server makes to itself that never
// returns (it did, in the e2e: the holder forked until its pids limit).
func TestServeOverItsOwnSource(t *testing.T) {
	needFUSE(t)
	dir := t.TempDir()
	write(t, dir, "proc/meminfo", hostMeminfo)
	write(t, dir, NodesDir+"/node0/meminfo", nodeMeminfos[0])
	write(t, dir, MemcgDir+"/"+MemcgStatFile, hostMemcgStat)
	write(t, dir, MemcgDir+"/"+MemcgUsageFile, "123\n")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "run"), 0o755))
	inOwnProcess(t, "TestServeOverItsOwnSourceChild", "NODEVIEW_OWNSOURCE_ROOT="+dir)
}

func TestServeOverItsOwnSourceChild(t *testing.T) {
	dir := os.Getenv("NODEVIEW_OWNSOURCE_ROOT")
	if dir == "" {
		return
	}
	root, err := fsutil.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	src, err := OpenMeminfoSource(root)
	require.NoError(t, err)
	defer src.Close()
	require.NoError(t, src.OpenMemcg())
	memcg := src.ShownMemcg()
	_, err = ServeOver(root, map[string]Render{
		MeminfoTarget:                   src.Shown(),
		MemcgDir + "/" + MemcgStatFile:  memcg[MemcgStatFile],
		MemcgDir + "/" + MemcgUsageFile: memcg[MemcgUsageFile],
	})
	require.NoError(t, err)
	read := func(rel string) string {
		out := make(chan []byte, 1)
		go func() {
			b, _ := os.ReadFile(filepath.Join(dir, rel))
			out <- b
		}()
		select {
		case b := <-out:
			return string(b)
		case <-time.After(30 * time.Second):
			t.Fatalf("a read of the served %s did not return in 30 s", rel)
			return ""
		}
	}
	b := read(MeminfoTarget)
	assert.EqualValues(t, 4000000, kB(t, b, "MemTotal"), "node 0's, made from the host's file:\n%s", b)
	// Node 0's memory that is not free, 4000000 − 2000000 kB.
	assert.Equal(t, "2048000000\n", read(MemcgDir+"/"+MemcgUsageFile))
	assert.Contains(t, read(MemcgDir+"/"+MemcgStatFile), "\ntotal_inactive_file 512000000\n", "node 0's Inactive(file), 500000 kB")
}
