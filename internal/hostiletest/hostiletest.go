// Package hostiletest makes, for tests, the hostile files of #24 that a
// reader of numa-partition may meet where it expects a regular file or a
// path inside a root: a FIFO (opening it to read blocks until a writer
// comes), a 1 GiB sparse file (a reader trusting it allocates 1 GiB),
// links out of a root each way a link can point, and a canary outside
// the root that nothing done below the root may touch. One maker for
// every package's tests; it imports nothing of the tool's, so fsutil's
// own tests can use it.
package hostiletest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// FIFO makes a named pipe at path, with nobody writing to it.
func FIFO(t testing.TB, path string) string {
	t.Helper()
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("making a FIFO at %s: %v", path, err)
	}
	return path
}

// SparseSize is the size of a Sparse file: far above every bounded read.
const SparseSize = 1 << 30

// Sparse makes a file of SparseSize bytes at path that takes no disk.
func Sparse(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("making a sparse file: %v", err)
	}
	defer f.Close()
	if err := f.Truncate(SparseSize); err != nil {
		t.Fatalf("making %s sparse: %v", path, err)
	}
	return path
}

// LinksOut are the targets a link at linkDir below root can point out of
// the root with, to target outside it: "absolute", "relative" (with
// ".."), "dotdot" (climbing far past the root), and to what a reader must
// never open, "device" (/dev/zero) and "fifo" (a FIFO outside).
func LinksOut(t testing.TB, root, linkDir, target string) map[string]string {
	t.Helper()
	rel, err := filepath.Rel(filepath.Join(root, linkDir), target)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"absolute": target,
		"relative": rel,
		"dotdot":   strings.Repeat("../", 40) + strings.TrimPrefix(target, "/"),
		"device":   "/dev/zero",
		"fifo":     FIFO(t, filepath.Join(t.TempDir(), "fifo")),
	}
}

// Outside is a directory beside a root holding a canary file: nothing
// done below the root may read through to it, change it, touch it or
// add anything beside it.
type Outside struct {
	Dir, Canary, Content string
	mtime                time.Time
}

// NewOutside is an Outside in a new temporary directory.
func NewOutside(t testing.TB, content string) *Outside {
	t.Helper()
	return NewOutsideIn(t, t.TempDir(), content)
}

// NewOutsideIn is an Outside in dir, which must be empty.
func NewOutsideIn(t testing.TB, dir, content string) *Outside {
	t.Helper()
	o := &Outside{Dir: dir, Canary: filepath.Join(dir, "canary"), Content: content}
	if err := os.WriteFile(o.Canary, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	o.mtime = time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(o.Canary, o.mtime, o.mtime); err != nil {
		t.Fatal(err)
	}
	return o
}

// Check fails t if the canary's content or mtime changed, if any of the
// extra files a test put beside it no longer holds Content, or if
// anything else is beside it.
func (o *Outside) Check(t testing.TB, extra ...string) {
	t.Helper()
	if b, err := os.ReadFile(o.Canary); err != nil || string(b) != o.Content {
		t.Errorf("the file outside the root was written: %q, %v", b, err)
	}
	if fi, err := os.Stat(o.Canary); err != nil || !fi.ModTime().Equal(o.mtime) {
		t.Errorf("the file outside the root was touched (mtime): %v", err)
	}
	for _, name := range extra {
		if b, err := os.ReadFile(filepath.Join(o.Dir, name)); err != nil || string(b) != o.Content {
			t.Errorf("%s outside the root was changed: %q, %v", name, b, err)
		}
	}
	if entries, _ := os.ReadDir(o.Dir); len(entries) != 1+len(extra) {
		t.Errorf("files were made outside the root: %v", entries)
	}
}

// Within runs f and returns its error, failing t if f blocks (a FIFO
// opened for reading) for 10 seconds.
func Within(t testing.TB, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked", what)
		return nil
	}
}

// OpenDescriptors counts the process's open file descriptors, to check
// that something leaves none behind.
func OpenDescriptors(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}
