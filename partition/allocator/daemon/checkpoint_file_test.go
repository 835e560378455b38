package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/hostiletest"
)

// tempPattern is what an interrupted checkpoint write leaves.
var tempPattern = fsutil.TempPattern(CheckpointName)

// Repro (#24, item 14's checkpoint and item 6): a dangling-symlink
// checkpoint started the daemon empty (forgetting allocations), a FIFO
// blocked its start, and /dev/zero or a 1 GiB sparse file cost gigabytes.
// Each is refused at start with a CorruptError naming the path.
func TestCheckpointThatIsNoRegularFileIsRefused(t *testing.T) {
	sparse := hostiletest.Sparse(t, filepath.Join(t.TempDir(), "sparse"))
	valid := t.TempDir()
	if err := WriteCheckpoint(valid, sampleCheckpoint()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, reason string
		plant        func(path string) error
	}{
		{"dangling symlink", "symbolic link", func(p string) error { return os.Symlink("/nonexistent/allocations.json", p) }},
		{"symlink to a valid checkpoint", "symbolic link", func(p string) error { return os.Symlink(filepath.Join(valid, CheckpointName), p) }},
		{"FIFO", "a FIFO", func(p string) error { hostiletest.FIFO(t, p); return nil }},
		{"symlink to /dev/zero", "symbolic link", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"device node", "a character device", func(p string) error { return unix.Mknod(p, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 5))) }},
		{"directory", "a directory", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"1 GiB sparse file", "larger than allowed", func(p string) error { return os.Rename(sparse, p) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, CheckpointName)
			if err := c.plant(path); err != nil {
				t.Skipf("cannot make a %s here: %v", c.name, err)
			}
			err := hostiletest.Within(t, "reading the checkpoint", func() error { _, err := ReadCheckpoint(dir); return err })
			var ce *CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.reason) || !strings.Contains(err.Error(), path) {
				t.Errorf("%v; want a CorruptError naming %s and saying %q", err, path, c.reason)
			}
		})
	}
}
