package fsutil

import (
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
