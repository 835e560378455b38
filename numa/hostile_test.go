package numa

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/hostiletest"
)

// A FIFO where a sysfs value should be is refused at once: opening it to
// read would wait forever for a writer.
func TestDiscoverRefusesAFIFO(t *testing.T) {
	root := writeTree(t, twoNodes())
	fifo := filepath.Join(root, "devices/system/node/node0/distance")
	require.NoError(t, os.Remove(fifo))
	hostiletest.FIFO(t, fifo)
	err := hostiletest.Within(t, "discover on a FIFO", func() error { _, err := NewFS(root).Discover(); return err })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "distance: not a regular file (p---------): sysfs values are files")
}

func TestDiscoverRefusesAnImpossiblePool(t *testing.T) {
	root := writeTree(t, with(twoNodes(), map[string]string{
		"devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages": "18446744073709551615\n",
	}))
	_, err := NewFS(root).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "hugepages-2048kB/nr_hugepages: 18446744073709551615 pages of 2Mi do not fit in 2^63 bytes")

	root = writeTree(t, with(twoNodes(), map[string]string{
		"devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages": "9\n",
	}))
	_, err = NewFS(root).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "hugepages-2048kB: 9 free pages, more than the 4 in the pool")
}

// A pool the kernel grows or shrinks while it is read is read again until
// nr_hugepages held still across the read; one that never does is named.
func TestDiscoverReadsAChangingPoolAgain(t *testing.T) {
	root := writeTree(t, twoNodes())
	pool := filepath.Join(root, "devices/system/node/node0/hugepages/hugepages-2048kB")
	set := func(nr, free string) {
		require.NoError(t, os.WriteFile(filepath.Join(pool, "nr_hugepages"), []byte(nr+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(pool, "free_hugepages"), []byte(free+"\n"), 0o644))
	}
	set("4", "4")
	changes := 0
	f := NewFS(root)
	// The pool grows from 4 to 128 pages right after its first
	// nr_hugepages is read: free_hugepages then says 128 of 4.
	f.afterRead = func(path string) {
		if strings.HasSuffix(path, "node0/hugepages/hugepages-2048kB/nr_hugepages") && changes == 0 {
			changes++
			set("128", "128")
		}
	}
	topo, err := f.Discover()
	require.NoError(t, err)
	n, ok := topo.Node(0)
	require.True(t, ok)
	assert.Equal(t, []Hugepages{{PageSize: 2 << 20, Total: 128, Free: 128}}, n.Hugepages[:1])

	// A pool that changes at every read.
	size := 0
	f.afterRead = func(path string) {
		if strings.HasSuffix(path, "node0/hugepages/hugepages-2048kB/nr_hugepages") {
			size++
			set(strconv.Itoa(size), "0")
		}
	}
	_, err = f.Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "hugepages-2048kB: nr_hugepages changed while the pool was read, 5 times")
}

// A cancelled discovery stops at its next file, with the context's error.
func TestDiscoverHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewFS(writeTree(t, twoNodes())).WithContext(ctx).Discover()
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
}

// status --root reads ROOT/sys: a value linked out of that tree is not
// read through (the link is named), and an absolute directory link is
// resolved inside the tree, as the kernel of that root would.
func TestDiscoverStaysInsideTheTree(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "distance")
	require.NoError(t, os.WriteFile(outside, []byte("10 21\n"), 0o644))
	root := writeTree(t, twoNodes())
	link := filepath.Join(root, "devices/system/node/node0/distance")
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(outside, link))
	_, err := NewFS(root).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), link+" is a symbolic link")

	if _, err := os.Stat("/sys/devices/system/cpu/cpu0/topology/core_id"); err != nil {
		t.Skipf("no live sysfs to link to: %v", err)
	}
	root = writeTree(t, twoNodes())
	topo := filepath.Join(root, "devices/system/cpu/cpu0/topology")
	require.NoError(t, os.RemoveAll(topo))
	// On the host this is the live /sys's cpu0: inside the tree, nothing.
	require.NoError(t, os.Symlink("/sys/devices/system/cpu/cpu0/topology", topo))
	got, err := NewFS(root).Discover()
	require.NoError(t, err)
	assert.Equal(t, -1, got.CPUs[0].Core, "cpu0's topology was read from outside the tree")
}

// Discovery holds the tree's root open while it runs (fsutil.OpenRoot)
// and closes it, and every file it read, when it returns: discovering
// many times, through its error paths too, leaves no descriptor open.
func TestDiscoverLeavesNoDescriptorOpen(t *testing.T) {
	good := writeTree(t, twoNodes())
	linked := writeTree(t, twoNodes())
	distance := filepath.Join(linked, "devices/system/node/node0/distance")
	require.NoError(t, os.Remove(distance))
	require.NoError(t, os.Symlink("/dev/zero", distance))
	fifo := writeTree(t, twoNodes())
	distance = filepath.Join(fifo, "devices/system/node/node0/distance")
	require.NoError(t, os.Remove(distance))
	hostiletest.FIFO(t, distance)
	discover := func() {
		_, err := NewFS(good).Discover()
		require.NoError(t, err)
		for _, bad := range []string{linked, fifo, filepath.Join(good, "missing")} {
			_, err := NewFS(bad).Discover()
			require.Error(t, err)
		}
	}
	discover() // the runtime's own descriptors (its poller) are made once
	before := hostiletest.OpenDescriptors(t)
	for range 200 {
		discover()
	}
	assert.Equal(t, before, hostiletest.OpenDescriptors(t), "descriptors open after 800 discoveries")
}
