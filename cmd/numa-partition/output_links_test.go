package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/hostiletest"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// Repro (#38, item 1): DIR's owner swapped DIR/etc for a link while root
// rendered into DIR, and render --out wrote the rest of the units and
// configs through it. Here a goroutine makes the swap as soon as the
// render has made DIR/etc; every file after it must be refused, and
// nothing may land where the link points.
func TestRenderOutRefusesLinkPlantedWhileWriting(t *testing.T) {
	b := bundle.Bundle{}
	for i := range 400 {
		b.Files = append(b.Files, bundle.File{Path: fmt.Sprintf("etc/systemd/system/node%d.slice", i), Mode: 0o644, Content: []byte("[Slice]\n")})
	}
	for attempt := range 5 {
		dir := filepath.Join(t.TempDir(), "out")
		o := hostiletest.NewOutside(t, "outside --out\n")
		swapped := make(chan bool, 1)
		go func() { swapped <- swapForLink(filepath.Join(dir, "etc"), o.Dir) }()
		err := writeTree(dir, b)
		if !<-swapped {
			t.Logf("attempt %d: the render ended before the swap; again", attempt)
			continue
		}
		o.Check(t)
		// Where the swap lands decides the error: on a link the writer
		// meets, a SymlinkError; between making a directory and entering
		// it, that the directory went missing. Either way the render
		// fails, naming a path below --out, and writes nothing through.
		require.Error(t, err, "render --out went on through a link planted while it wrote")
		var se *fsutil.SymlinkError
		if !errors.As(err, &se) {
			require.Contains(t, err.Error(), filepath.Join(dir, "etc"), "the error names the path that changed under the render")
		}
		return
	}
	t.Skip("the render always ended before the link was planted")
}

// swapForLink waits (up to 10 s) for the directory at p to appear, then
// moves it aside and puts a link to target in its place, as an attacker
// owning p's parent would. It says whether it did.
func swapForLink(p, target string) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if os.Rename(p, p+".aside") != nil {
			return false
		}
		return os.Symlink(target, p) == nil
	}
	return false
}

// Repro (#38, item 1): a link to a file elsewhere, planted at discover
// --host-facts-out FILE, had the host's facts written over that file.
// The write replaces the link itself.
func TestHostFactsOutReplacesLinkAtFile(t *testing.T) {
	o := hostiletest.NewOutside(t, "outside\n")
	file := filepath.Join(t.TempDir(), "facts.json")
	require.NoError(t, os.Symlink(o.Canary, file))
	conf := filepath.Join("..", "..", "packaging", "config.toml")
	out, err := runDiscover(t, "--sysfs", fixtureSys("hwloc-32amd64-4s2n4c-cgroup2"), "--config", conf, "discover", "--host-facts-out", file)
	require.NoError(t, err, out)
	o.Check(t)
	fi, err := os.Lstat(file)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "%s is %v, want the facts as a regular file", file, fi.Mode())
}

// reset-state moves the checkpoint aside below the state dir it opened
// (#38: every write of every command through fsutil.Root), and a link at
// the checkpoint's name is moved as the link, never followed.
func TestResetStateMovesAsideBelowStateDir(t *testing.T) {
	dir := t.TempDir()
	o := hostiletest.NewOutside(t, "outside\n")
	require.NoError(t, os.Symlink(o.Canary, filepath.Join(dir, "allocations.json")))
	out, err := runLine(t, "allocator", "reset-state", "--partition", "p", "--state-dir", dir)
	require.NoError(t, err, out)
	require.Contains(t, out, "moved "+filepath.Join(dir, "allocations.json")+" to "+filepath.Join(dir, "allocations.json.reset-"))
	_, err = os.Lstat(filepath.Join(dir, "allocations.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
	o.Check(t)
}
