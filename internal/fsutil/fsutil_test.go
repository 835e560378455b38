package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.conf")
	if err := WriteFile(p, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two" {
		t.Fatalf("content %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "sub", TempPattern(p))); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// A directory in the way: the old content stays, nothing is left over.
	blocked := filepath.Join(dir, "d")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(blocked, []byte("x"), 0o644); err == nil {
		t.Fatal("replacing a directory succeeded")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, TempPattern(blocked))); len(left) != 0 {
		t.Errorf("temporary files left after a failed write: %v", left)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("syncing a missing directory succeeded")
	}
}

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	l, err := TryLock(path, 0o600, "pid 1: first")
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file: a second open in this process conflicts too.
	_, err = TryLock(path, 0o600, "pid 2: second")
	var locked *LockedError
	if !errors.As(err, &locked) || !errors.Is(err, ErrLocked) || locked.Holder != "pid 1: first" {
		t.Fatalf("second lock: %v (holder %+v), want ErrLocked naming the first holder", err, locked)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l, err = TryLock(path, 0o600, "")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("a released lock keeps its holder: %q", b)
	}
	_ = l.Release()
	if _, err := TryLock(filepath.Join(t.TempDir(), "missing", "lock"), 0o600, ""); err == nil || errors.Is(err, ErrLocked) {
		t.Errorf("lock in a missing directory: %v", err)
	}
}
