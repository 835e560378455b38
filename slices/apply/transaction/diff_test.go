package transaction

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The diff of a new, a changed and a removed file applies with `git
// apply` to the tree it was made against and yields the new tree (a new
// file's hunk used to start "@@ -1 +1,2 @@" with a blank context line).
func TestDiffAppliesWithGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed to check the diff applies: %v", err)
	}
	dir := t.TempDir()
	write := func(rel, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644))
	}
	write("etc/changed.conf", "a\nb\nc\n")
	write("etc/gone.conf", "x\ny\n")
	cur := Current{Files: map[string]FileState{
		"etc/changed.conf": {Content: []byte("a\nb\nc\n"), Mode: 0o644},
		"etc/gone.conf":    {Content: []byte("x\ny\n"), Mode: 0o644},
	}}
	steps := []Step{
		{Action: WriteFile{Path: "etc/new.conf", Content: []byte("one\ntwo\n"), Mode: 0o644}},
		{Action: WriteFile{Path: "etc/changed.conf", Content: []byte("a\nB\nc\nd\n"), Mode: 0o644}},
		{Action: RemoveFile{Path: "etc/gone.conf"}},
	}
	d := Diff(steps, cur)
	assert.Contains(t, d, "@@ -0,0 +1,2 @@\n+one\n+two\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.diff"), []byte(d), 0o644))
	out, err := exec.Command(git, "-C", dir, "apply", "--unsafe-paths", "p.diff").CombinedOutput()
	require.NoError(t, err, "git apply:\n%s\n%s", out, d)
	for rel, want := range map[string]string{"etc/new.conf": "one\ntwo\n", "etc/changed.conf": "a\nB\nc\nd\n"} {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		require.NoError(t, err)
		assert.Equal(t, want, string(b), rel)
	}
	assert.NoFileExists(t, filepath.Join(dir, "etc/gone.conf"))
}
