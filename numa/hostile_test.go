package numa

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A FIFO where a sysfs value should be is refused at once: opening it to
// read would wait forever for a writer.
func TestDiscoverRefusesAFIFO(t *testing.T) {
	root := writeTree(t, twoNodes())
	fifo := filepath.Join(root, "devices/system/node/node0/distance")
	require.NoError(t, os.Remove(fifo))
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() {
		_, err := NewFS(root).Discover()
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "distance: not a regular file (p---------): sysfs values are files")
	case <-time.After(10 * time.Second):
		t.Fatal("discover blocked on a FIFO")
	}
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

// A cancelled discovery stops at its next file, with the context's error.
func TestDiscoverHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewFS(writeTree(t, twoNodes())).WithContext(ctx).Discover()
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
}
