package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/hostiletest"
)

// hostile makes, below root, links that point out of it to o's canary
// each way a link can (hostiletest.LinksOut), and a directory link to
// its directory. It returns the names of the file links.
func hostile(t *testing.T, root string, o *hostiletest.Outside) []string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, target := range hostiletest.LinksOut(t, root, "etc", o.Canary) {
		if err := os.Symlink(target, filepath.Join(root, "etc", name)); err != nil {
			t.Fatal(err)
		}
		names = append(names, "etc/"+name)
	}
	// A directory link: etc/dir/canary.
	if err := os.Symlink(o.Dir, filepath.Join(root, "etc/dir")); err != nil {
		t.Fatal(err)
	}
	return names
}

// Repro (#24, items 1 and 2): a link below --root made apply write, lock
// and diff read the file it pointed to outside the root.
func TestRootStaysInsideThroughHostileLinks(t *testing.T) {
	for _, kind := range rootKinds {
		t.Run(kind.name, func(t *testing.T) {
			root := t.TempDir()
			c := hostiletest.NewOutside(t, "outside the root\n")
			names := hostile(t, root, c)
			staysInside(t, kind.open(t, root), root, names, c)
		})
	}
}

// rootKinds are the two Roots: the root opened afresh at each call, and
// the root held open (OpenRoot). Every guarantee holds for both.
var rootKinds = []struct {
	name string
	open func(t testing.TB, dir string) Root
}{
	{"NewRoot", func(_ testing.TB, dir string) Root { return NewRoot(dir) }},
	{"OpenRoot", func(t testing.TB, dir string) Root {
		r, err := OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	}},
}

func staysInside(t *testing.T, r Root, root string, names []string, c *hostiletest.Outside) {
	for _, name := range names {
		for op, f := range map[string]func() error{
			"read": func() error { _, err := r.ReadFile(name, 1<<20); return err },
			"lock": func() error { _, err := r.TryLock(name, 0o644, "pid 1: test"); return err },
			"open": func() error { f, err := r.Open(name, os.O_RDWR|os.O_TRUNC, 0); f.Close(); return err },
		} {
			err := hostiletest.Within(t, op+" "+name, f)
			var se *SymlinkError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), r.Path(name)) {
				t.Errorf("%s %s: %v, want a SymlinkError naming %s", op, name, err, r.Path(name))
			}
		}
		if fi, err := r.Lstat(name); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("lstat %s: %v, %v; want the link itself", name, fi, err)
		}
	}
	// Through a directory link: resolved inside the root (where there is
	// no such file), never on the host.
	if _, err := r.ReadFile("etc/dir/canary", 1<<20); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read through a directory link: %v, want not-exist inside the root", err)
	}
	// Dangling inside the root: refused, naming the link.
	if err := r.WriteFile("etc/dir/canary", []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), r.Path("etc/dir")) {
		t.Errorf("write through a directory link dangling inside the root: %v, want an error naming it", err)
	}
	if err := os.MkdirAll(filepath.Join(root, c.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("etc/dir/canary", []byte("x"), 0o644); err != nil {
		t.Fatalf("write through a directory link: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, c.Dir, "canary")); err != nil || string(b) != "x" {
		t.Errorf("the write through etc/dir did not land inside the root: %q, %v", b, err)
	}
	// A write replaces the link itself, not its target.
	if err := r.WriteFile("etc/absolute", []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "etc/absolute")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("etc/absolute after the write: %v, %v; want a regular file", fi, err)
	}
	if err := r.Remove("etc/relative"); err != nil {
		t.Fatal(err)
	}
	if err := r.MkdirAll("etc/dotdot-dir/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.Rename("etc/dotdot", "etc/renamed"); err != nil {
		t.Fatal(err)
	}
	c.Check(t)
}

// The documented `--root /proc/<pid>/root`: absolute links in that tree
// resolve inside it. Here the root is reached through /proc/self/root
// plus the test's directory, and a directory link "/etc" -> "/real-etc"
// must land in ROOT/real-etc, not the host's /real-etc.
func TestRootResolvesAbsoluteLinksInside(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join("/proc/self/root", dir)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "real-etc"), 0o755))
	must(os.Symlink("/real-etc", filepath.Join(dir, "etc")))
	r := NewRoot(root)
	must(r.WriteFile("etc/numa-partition/x.conf", []byte("inside"), 0o644))
	b, err := os.ReadFile(filepath.Join(dir, "real-etc/numa-partition/x.conf"))
	if err != nil || string(b) != "inside" {
		t.Fatalf("the write did not follow /etc inside the root: %q, %v", b, err)
	}
	got, err := r.ReadFile("/etc/numa-partition/x.conf", 100)
	if err != nil || string(got) != "inside" {
		t.Fatalf("read back: %q, %v", got, err)
	}
	if _, err := os.Stat("/real-etc"); err == nil {
		t.Error("/real-etc was made on the host")
	}
	// A magic link (/proc/self/fd/N) inside the root is refused.
	must(os.MkdirAll(filepath.Join(dir, "proc"), 0o755))
	must(os.Symlink("/proc/self/cwd", filepath.Join(dir, "magic")))
	if _, err := NewRoot("/").ReadFile(filepath.Join(dir, "magic/etc"), 100); err == nil {
		t.Error("a read through a magic link succeeded")
	}
}

func TestRootWriteMkdirRemove(t *testing.T) {
	root := t.TempDir()
	r := NewRoot(root)
	if err := r.WriteFile("a/b/f", []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	fi, err := r.Lstat("/a/b/f")
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("lstat: %v, %v", fi, err)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "a/b", TempPattern("f"))); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := r.Remove("a/b"); !errors.Is(err, unix.ENOTEMPTY) {
		t.Errorf("removing a full directory: %v, want ENOTEMPTY", err)
	}
	if err := r.Remove("a/b/f"); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove("a/b/f"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removing a missing file: %v, want not-exist", err)
	}
	if err := r.Remove("a/b"); err != nil {
		t.Errorf("removing an empty directory: %v", err)
	}
	if err := r.Remove("a"); err != nil {
		t.Errorf("removing an empty directory: %v", err)
	}
	if err := r.WriteFile("a", []byte("file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.MkdirAll("a/c", 0o755); err == nil || !strings.Contains(err.Error(), r.Path("a")) {
		t.Errorf("mkdir below a file: %v, want an error naming %s", err, r.Path("a"))
	}
	if err := r.WriteFile("/", nil, 0o644); err == nil {
		t.Error("writing the root itself succeeded")
	}
	entries, err := r.ReadDir(".")
	if err != nil || len(entries) != 1 || entries[0].Name() != "a" {
		t.Errorf("readdir: %v, %v", entries, err)
	}
}

// A lock file that is a hard link to a file elsewhere would have that
// file truncated by the holder note.
func TestLockRefusesHardLinkAndFIFO(t *testing.T) {
	root := t.TempDir()
	c := hostiletest.NewOutside(t, "outside the root\n")
	if err := os.Link(c.Canary, filepath.Join(root, "lock")); err != nil {
		t.Skipf("no hard link across these directories: %v", err)
	}
	if _, err := NewRoot(root).TryLock("lock", 0o644, "pid 1"); err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("lock on a hard link: %v, want refused", err)
	}
	hostiletest.FIFO(t, filepath.Join(root, "fifo"))
	var nr *NotRegularError
	if _, err := NewRoot(root).TryLock("fifo", 0o644, "pid 1"); !errors.As(err, &nr) {
		t.Errorf("lock on a FIFO: %v, want a NotRegularError", err)
	}
	c.Check(t)
}

// O_PATH takes no other open flag in openat2 (EINVAL): Open must not add
// its own to it (the cgroup mode's statfs opened sys/fs/cgroup so).
func TestRootOpenPath(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := NewRoot(root).Open("d", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestRemoveTemps(t *testing.T) {
	root := t.TempDir()
	r := NewRoot(root)
	keep := []string{"d/.f.numa-partition-x1", "d/.g.numa-partition-12", "d/f", "d/.f.numa-partition-"}
	gone := []string{"d/.f.numa-partition-123", "d/.f.numa-partition-4294967295"}
	for _, p := range append(keep, gone...) {
		if err := r.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := r.RemoveTemps("d/f")
	if err != nil || len(removed) != len(gone) {
		t.Fatalf("removed %v, %v; want %v", removed, err, gone)
	}
	for _, p := range keep {
		if _, err := r.Lstat(p); err != nil {
			t.Errorf("%s: %v; it is not a temporary file of d/f", p, err)
		}
	}
	if removed, err := r.RemoveTemps("missing/f"); err != nil || len(removed) != 0 {
		t.Errorf("in a missing directory: %v, %v", removed, err)
	}
}

// OpenRoot resolves from the directory it opened: the root renamed and a
// link out of it put in its place afterwards change nothing, a closed
// Root refuses every call (it never resolves from a descriptor number
// the kernel may have handed out again), and Close leaves no descriptor.
func TestOpenRootHoldsItsDirectory(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/value"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := hostiletest.NewOutside(t, "outside the root\n")
	before := hostiletest.OpenDescriptors(t)
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(root, filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(c.Dir, root); err != nil {
		t.Fatal(err)
	}
	if b, err := r.ReadFile("etc/value", 64); err != nil || string(b) != "inside\n" {
		t.Errorf("read after the root was replaced by a link: %q, %v; want the held directory's file", b, err)
	}
	if _, err := r.ReadFile("canary", 64); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read of the link's target's file: %v; want not-exist in the held directory", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := r.ReadFile("etc/value", 64); !errors.Is(err, os.ErrClosed) {
		t.Errorf("read after Close: %v; want os.ErrClosed", err)
	}
	if err := r.WriteFile("etc/new", []byte("x"), 0o644); !errors.Is(err, os.ErrClosed) {
		t.Errorf("write after Close: %v; want os.ErrClosed", err)
	}
	if after := hostiletest.OpenDescriptors(t); after != before {
		t.Errorf("%d descriptors open after Close, %d before", after, before)
	}
	if _, err := OpenRoot(filepath.Join(base, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenRoot of a missing directory: %v", err)
	}
	c.Check(t)
}

// Repro (#38, item 1): render --out DIR wrote its files through DIR/etc
// swapped for a link by DIR's owner. A RefusingLinks root writes, makes
// and reads through no link below it, on the way or at the end, even one
// that stays inside it, and says which path met it.
func TestRefusingLinksFollowsNoLink(t *testing.T) {
	for _, kind := range rootKinds {
		t.Run(kind.name, func(t *testing.T) {
			root := t.TempDir()
			c := hostiletest.NewOutside(t, "outside the root\n")
			hostile(t, root, c)
			if err := os.MkdirAll(filepath.Join(root, "real"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("real", filepath.Join(root, "inside")); err != nil {
				t.Fatal(err)
			}
			r := kind.open(t, root).RefusingLinks()
			for name, f := range map[string]func() error{
				"etc/dir/canary":     func() error { return r.WriteFile("etc/dir/canary", []byte("x"), 0o644) },
				"etc/dir/new/f":      func() error { return r.WriteFile("etc/dir/new/f", []byte("x"), 0o644) },
				"inside/f":           func() error { return r.WriteFile("inside/f", []byte("x"), 0o644) },
				"inside/sub":         func() error { return r.MkdirAll("inside/sub", 0o755) },
				"inside/sub/canary":  func() error { _, err := r.ReadFile("inside/sub/canary", 100); return err },
				"etc/absolute":       func() error { _, err := r.ReadFile("etc/absolute", 100); return err },
				"etc/dir/canary (r)": func() error { _, err := r.ReadFile("etc/dir/canary", 100); return err },
			} {
				var se *SymlinkError
				if err := f(); !errors.As(err, &se) {
					t.Errorf("%s: %v, want a SymlinkError", name, err)
				}
			}
			if entries, _ := os.ReadDir(filepath.Join(root, "real")); len(entries) != 0 {
				t.Errorf("written through a link inside the root: %v", entries)
			}
			c.Check(t)
			if err := r.WriteFile("a/b/f", []byte("x"), 0o644); err != nil {
				t.Errorf("a write with no link on the way: %v", err)
			}
		})
	}
}

// Stat follows a link inside the root, as a process chrooted there
// would, and never out of it: every hostile link's target outside is
// out of reach (not there inside, or a refused magic link).
func TestRootStatFollowsLinksInsideOnly(t *testing.T) {
	for _, kind := range rootKinds {
		t.Run(kind.name, func(t *testing.T) {
			root := t.TempDir()
			c := hostiletest.NewOutside(t, "outside the root\n")
			names := hostile(t, root, c)
			r := kind.open(t, root)
			for _, name := range names {
				if fi, err := r.Stat(name); err == nil {
					t.Errorf("stat %s: %s, size %d; reached outside the root", name, fi.Name(), fi.Size())
				}
			}
			if err := os.MkdirAll(filepath.Join(root, "opt/k8s"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "opt/k8s/kubelet"), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/opt/k8s/kubelet", filepath.Join(root, "etc/kubelet")); err != nil {
				t.Fatal(err)
			}
			if fi, err := r.Stat("etc/kubelet"); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o755 {
				t.Errorf("stat through an absolute link inside the root: %v, %v", fi, err)
			}
			c.Check(t)
		})
	}
}
