package nodeview

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// inMountNamespace runs f on a thread of its own in a new mount
// namespace (whose mounts do not reach the host's), and ends the thread
// after: its namespace ends with it.
func inMountNamespace(t *testing.T, f func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: mounting needs root (make test runs as root in CI)")
	}
	done := make(chan any)
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread exits with its namespace
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			done <- err
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
			done <- err
			return
		}
		defer func() {
			if r := recover(); r != nil {
				done <- r
			}
		}()
		f()
	}()
	if r, ok := <-done; ok {
		t.Fatalf("in a mount namespace: %v", r)
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func TestMountBindsTheSliceOverTheRoot(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sys/fs/cgroup/cpu.stat", "host\n")
	write(t, dir, "sys/fs/cgroup/node0.slice/cpu.stat", "slice\n")
	write(t, dir, "sys/fs/cgroup/memory.stat", "host\n") // its source is missing
	root := fsutil.NewRoot(dir)
	binds := []Bind{
		{Source: "sys/fs/cgroup/node0.slice/cpu.stat", Target: "sys/fs/cgroup/cpu.stat"},
		{Source: "sys/fs/cgroup/node0.slice/memory.stat", Target: "sys/fs/cgroup/memory.stat"},
		{Source: "sys/fs/cgroup/node0.slice/io.stat", Target: "sys/fs/cgroup/io.stat"},
	}
	inMountNamespace(t, func() {
		got, err := Mount(root, binds)
		require.NoError(t, err)
		require.Len(t, got, 3)
		assert.Equal(t, "", got[0].Skipped)
		assert.Equal(t, "no "+filepath.Join(dir, "sys/fs/cgroup/node0.slice/memory.stat"), got[1].Skipped)
		assert.Equal(t, "no "+filepath.Join(dir, "sys/fs/cgroup/node0.slice/io.stat"), got[2].Skipped)
		b, err := os.ReadFile(filepath.Join(dir, "sys/fs/cgroup/cpu.stat"))
		require.NoError(t, err)
		assert.Equal(t, "slice\n", string(b), "the root's file reads the slice's")
		err = os.WriteFile(filepath.Join(dir, "sys/fs/cgroup/cpu.stat"), []byte("x"), 0o644)
		assert.True(t, errors.Is(err, unix.EROFS), "the bind is read-only: %v", err)
	})
	// The host's namespace never saw the bind.
	b, err := os.ReadFile(filepath.Join(dir, "sys/fs/cgroup/cpu.stat"))
	require.NoError(t, err)
	assert.Equal(t, "host\n", string(b))
	b, err = os.ReadFile(filepath.Join(dir, "sys/fs/cgroup/node0.slice/cpu.stat"))
	require.NoError(t, err)
	assert.Equal(t, "slice\n", string(b), "the source is untouched")
}

// A link at either end is not followed: the bind is refused, naming it.
func TestMountRefusesLinks(t *testing.T) {
	for _, end := range []string{"source", "target"} {
		t.Run(end, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "elsewhere", "secret\n")
			write(t, dir, "sys/fs/cgroup/cpu.stat", "host\n")
			write(t, dir, "sys/fs/cgroup/node0.slice/cpu.stat", "slice\n")
			link := "sys/fs/cgroup/node0.slice/cpu.stat"
			if end == "target" {
				link = "sys/fs/cgroup/cpu.stat"
			}
			require.NoError(t, os.Remove(filepath.Join(dir, link)))
			require.NoError(t, os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, link)))
			inMountNamespace(t, func() {
				_, err := Mount(fsutil.NewRoot(dir), []Bind{{Source: "sys/fs/cgroup/node0.slice/cpu.stat", Target: "sys/fs/cgroup/cpu.stat"}})
				var symlink *fsutil.SymlinkError
				require.ErrorAs(t, err, &symlink)
				assert.Contains(t, err.Error(), filepath.Join(dir, link)+" is a symbolic link")
			})
			b, err := os.ReadFile(filepath.Join(dir, "elsewhere"))
			require.NoError(t, err)
			assert.Equal(t, "secret\n", string(b))
		})
	}
}

// On the real kernel: a cgroup of its own, with no task in it, becomes
// the root of the v1 memory controller, in the namespace only. Its usage
// is 0; the host's is not. On the unified hierarchy nothing is bound.
func TestMountRealCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: making a cgroup and mounting need root (make test runs as root in CI)")
	}
	const slice = "np-nodeview-test.slice"
	const hierarchy = "sys/fs/cgroup/memory"
	usage := map[string]func(string) (uint64, error){
		hierarchy: func(dir string) (uint64, error) { return readUint(filepath.Join(dir, "memory.usage_in_bytes")) },
	}
	if _, err := usage[hierarchy]("/" + hierarchy); err != nil {
		t.Skip("SKIPPED LOUDLY: no cgroup v1 memory controller at /sys/fs/cgroup/memory (the view binds v1 files only): ", err)
	}
	cg := filepath.Join("/", hierarchy, slice)
	if err := os.Mkdir(cg, 0o755); err != nil && !os.IsExist(err) {
		t.Skipf("SKIPPED LOUDLY: cannot make cgroup %s here: %v", cg, err)
	}
	t.Cleanup(func() { _ = os.Remove(cg) })
	host, err := usage[hierarchy]("/" + hierarchy)
	require.NoError(t, err)
	require.NotZero(t, host, "the host's root cgroup uses memory")
	inMountNamespace(t, func() {
		got, err := Mount(fsutil.NewRoot("/"), UsageBinds(slice))
		require.NoError(t, err)
		made := 0
		for _, m := range got {
			if m.Skipped == "" {
				made++
			}
		}
		require.NotZero(t, made, "some bind was made: %+v", got)
		inView, err := usage[hierarchy]("/" + hierarchy)
		require.NoError(t, err)
		assert.Zero(t, inView, "the root reads the empty cgroup's usage, not the host's %d", host)
	})
	after, err := usage[hierarchy]("/" + hierarchy)
	require.NoError(t, err)
	assert.NotZero(t, after, "the host's namespace still reads the host's usage")
}

func readUint(p string) (uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}
