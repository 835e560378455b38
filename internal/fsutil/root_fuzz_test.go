package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRootStaysInside plants a link with any target below a root, then
// reads, writes, makes directories, removes, locks and sweeps any path
// there, through each kind of Root (NewRoot, OpenRoot): nothing outside the root (a canary directory beside it) is ever
// changed or added to.
func FuzzRootStaysInside(f *testing.F) {
	for _, seed := range [][2]string{
		{"../../outside/canary", "a/link"},
		{"/outside/canary", "a/link"},
		{"/", "a/link/outside/canary"},
		{"..", "a/link/../../outside/x"},
		{"/dev/zero", "a/link"},
		{"../../outside", "a/link/new"},
		{"/proc/self/cwd", "a/link/outside/canary"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, target, rel string) {
		if len(target) > 256 || len(rel) > 256 || strings.ContainsRune(target+rel, 0) {
			return
		}
		base := t.TempDir()
		root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
		for _, d := range []string{filepath.Join(root, "a/b"), outside} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		canary := filepath.Join(outside, "canary")
		if err := os.WriteFile(canary, []byte("canary"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, "a/link")); err != nil {
			return
		}
		for _, kind := range rootKinds {
			r := kind.open(t, root)
			_, _ = r.ReadFile(rel, 1<<10) // errors are fine: what matters is outside
			_, _ = r.ReadFileFollow(rel, 1<<10)
			_, _ = r.ReadDir(rel)
			_ = r.WriteFile(rel, []byte("x"), 0o644)
			_ = r.MkdirAll(rel+"/d", 0o755)
			if l, err := r.TryLock(rel, 0o644, "holder"); err == nil {
				_ = l.Release()
			}
			_, _ = r.RemoveTemps(rel)
			_ = r.Remove(rel)
		}
		b, err := os.ReadFile(canary)
		if err != nil || string(b) != "canary" {
			t.Fatalf("link %q, path %q: the canary outside is %q, %v", target, rel, b, err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 1 {
			t.Fatalf("link %q, path %q: made outside the root: %v", target, rel, entries)
		}
	})
}
