package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/hostfacts"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/hostiletest"
	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/partition/allocator/scenario"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

// Repro (#24, item 6): a config, a --plan file, a manifest (admit -f,
// simulate), a kubeconfig, an allocator config or a /proc or /sys value
// that is a FIFO hung the command (SIGTERM did not stop it), /dev/zero
// grew it to gigabytes and a sparse 1 GiB file cost 1 GiB. Each reader
// refuses them at once, naming the path.
func TestEveryReaderRefusesWhatIsNotABoundedFile(t *testing.T) {
	dir := t.TempDir()
	fifo := hostiletest.FIFO(t, filepath.Join(dir, "fifo"))
	sparse := hostiletest.Sparse(t, filepath.Join(dir, "sparse"))
	// The /proc and /sys readers take a directory: a fake one whose
	// value is the hostile file.
	procWith := func(target string) string {
		p := filepath.Join(t.TempDir(), "proc")
		if err := os.MkdirAll(filepath.Join(p, "sys/kernel"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"pid_max", "threads-max"} {
			if err := os.Symlink(target, filepath.Join(p, "sys/kernel", n)); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	readers := map[string]func(path string) error{
		"config":           func(p string) error { _, err := config.LoadFile(p); return err },
		"--plan":           func(p string) error { _, err := readPlanFile(p); return err },
		"--host-facts":     func(p string) error { _, err := planner.LoadFacts(p); return err },
		"admit -f":         func(p string) error { _, err := allocReadManifest(p); return err },
		"simulate":         func(p string) error { _, _, err := scenario.Load(p); return err },
		"kubeconfig":       func(p string) error { _, err := kubeapi.Load("/", p); return err },
		"allocator config": func(p string) error { _, err := daemon.ReadConfigFile(p); return err },
		"nr_hugepages":     func(p string) error { _, err := hugepool.Read(p); return err },
		"pid_max": func(p string) error {
			_, err := hostfacts.Host{Proc: procWith(p)}.TaskLimit()
			return err
		},
	}
	for name, read := range readers {
		for _, c := range []struct{ path, want string }{
			{fifo, "a FIFO"},
			{"/dev/zero", "a character device"},
			{sparse, "larger than allowed"},
		} {
			err := hostiletest.Within(t, name+" from "+c.path, func() error { return read(c.path) })
			var nr *fsutil.NotRegularError
			if err == nil || !(errors.As(err, &nr) || errors.Is(err, fsutil.ErrTooLarge)) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s from %s: %v; want a refusal saying %q", name, c.path, err, c.want)
			}
		}
	}
}
