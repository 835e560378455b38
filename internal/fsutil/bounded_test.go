package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/hostiletest"
)

func TestReadFileBounded(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFileBounded(small, 5)
	if err != nil || string(b) != "12345" {
		t.Fatalf("at the limit: %q, %v", b, err)
	}
	if _, err := ReadFileBounded(small, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v, want ErrTooLarge", err)
	}
	// A 1 GiB sparse file costs nothing: refused from its size.
	sparse := hostiletest.Sparse(t, filepath.Join(dir, "sparse"))
	if _, err := ReadFileBounded(sparse, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("sparse 1 GiB: %v, want ErrTooLarge", err)
	}
}

// Repro (#24, item 6): a config that is a FIFO hung the command, and
// /dev/zero grew it to gigabytes.
func TestReadFileBoundedRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := hostiletest.FIFO(t, filepath.Join(dir, "fifo"))
	for _, c := range []struct{ path, want string }{
		{fifo, "a FIFO"},
		{"/dev/zero", "a character device"},
		{dir, "a directory"},
	} {
		err := hostiletest.Within(t, "reading "+c.path, func() error { _, err := ReadFileBounded(c.path, 1<<20); return err })
		var nr *NotRegularError
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a NotRegularError saying %q", c.path, err, c.want)
		}
	}
}

// sysfs files say 4096 bytes and procfs files 0, whatever they hold: the
// size is no refusal there (cpu/online with a 64-byte limit was refused
// for its 4096), the read's bound is.
func TestReadBoundedPseudoFiles(t *testing.T) {
	for _, p := range []string{"/sys/devices/system/cpu/online", "/proc/sys/kernel/pid_max"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s: %v", p, err)
		}
		b, err := ReadFileBounded(p, 64)
		if err != nil || len(b) == 0 {
			t.Errorf("%s with a 64-byte limit: %q, %v", p, b, err)
		}
	}
	// The bound still holds: /proc/self/status is over 64 bytes.
	if _, err := ReadFileBounded("/proc/self/status", 64); !errors.Is(err, ErrTooLarge) {
		t.Errorf("/proc/self/status with a 64-byte limit: %v, want ErrTooLarge", err)
	}
}
