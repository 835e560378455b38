package nodeview

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// The unified binds with a real cgroup2 hierarchy (the host's, or a
// hybrid host's unified one) placed at a test root's sys/fs/cgroup: the
// root's cpu.stat then reads an empty slice's (usage 0), and the bound
// file passes the check runc's cgroup library makes when it opens by
// path (a cgroup2 file system), while openat2 with RESOLVE_NO_XDEV, its
// other way, is refused it: why the kubelet's unit hides openat2.
func TestUnifiedUsageBindsRealCgroup2(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: making a cgroup and mounting need root (make test runs as root in CI)")
	}
	hierarchy := ""
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			hierarchy = dir
			break
		}
	}
	if hierarchy == "" {
		t.Skip("SKIPPED LOUDLY: no cgroup2 hierarchy on this host")
	}
	const slice = "np-nodeview-unified-test.slice"
	cg := filepath.Join(hierarchy, slice)
	if err := os.Mkdir(cg, 0o755); err != nil && !os.IsExist(err) {
		t.Skipf("SKIPPED LOUDLY: cannot make cgroup %s here: %v", cg, err)
	}
	t.Cleanup(func() { _ = os.Remove(cg) })
	host, err := usageUsec(filepath.Join(hierarchy, "cpu.stat"))
	require.NoError(t, err)
	require.NotZero(t, host, "the host's root cgroup used CPU")
	root := t.TempDir()
	at := filepath.Join(root, CgroupRoot)
	require.NoError(t, os.MkdirAll(at, 0o755))
	inMountNamespace(t, func() {
		require.NoError(t, unix.Mount(hierarchy, at, "", unix.MS_BIND, ""))
		got, err := Mount(fsutil.NewRoot(root), UnifiedUsageBinds(slice))
		require.NoError(t, err)
		bound := map[string]bool{}
		for _, m := range got {
			bound[filepath.Base(m.Target)] = m.Skipped == ""
		}
		require.True(t, bound["cpu.stat"], "cpu.stat bound: %+v", got)
		stat := filepath.Join(at, "cpu.stat")
		inView, err := usageUsec(stat)
		require.NoError(t, err)
		assert.Zero(t, inView, "the root's cpu.stat reads the empty slice's, not the host's %d µs", host)

		f, err := os.Open(stat)
		require.NoError(t, err)
		defer f.Close()
		var st unix.Statfs_t
		require.NoError(t, unix.Fstatfs(int(f.Fd()), &st))
		assert.Equal(t, int64(unix.CGROUP2_SUPER_MAGIC), int64(st.Type), "opened by path, a cgroup2 file, as runc's library checks")

		dir, err := unix.Open(at, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		defer unix.Close(dir)
		fd, err := unix.Openat2(dir, "cpu.stat", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV | unix.RESOLVE_NO_SYMLINKS})
		if err == nil {
			unix.Close(fd)
		}
		assert.True(t, errors.Is(err, unix.EXDEV), "openat2 with RESOLVE_NO_XDEV, as runc's library opens on cgroup v2, refuses the bound file: %v", err)
	})
	after, err := usageUsec(filepath.Join(hierarchy, "cpu.stat"))
	require.NoError(t, err)
	assert.NotZero(t, after, "the host's namespace still reads the host's")
}

// In a process whose openat2 works (any test's), the kubelet's check fails
// and says what to do.
func TestCheckOpenat2HiddenFailsWhereOpenat2Works(t *testing.T) {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
	if errors.Is(err, unix.ENOSYS) {
		require.NoError(t, CheckOpenat2Hidden(), "a kernel without openat2 passes")
		return
	}
	require.NoError(t, err)
	unix.Close(fd)
	err = CheckOpenat2Hidden()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SystemCallFilter=~openat2 is not in effect")
	assert.Contains(t, err.Error(), "libseccomp")
}

func usageUsec(stat string) (uint64, error) {
	b, err := os.ReadFile(stat)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			return strconv.ParseUint(v, 10, 64)
		}
	}
	return 0, errors.New(stat + ": no usage_usec")
}
