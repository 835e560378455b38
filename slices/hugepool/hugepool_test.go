package hugepool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPath(t *testing.T) {
	assert.Equal(t, "/sys/devices/system/node/node3/hugepages/hugepages-2048kB/nr_hugepages", Path("/sys", 3, 2<<20))
	assert.Equal(t, "s/devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages", Path("s", 0, 1<<30))
}

func TestReadSet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nr_hugepages")
	require.NoError(t, os.WriteFile(p, []byte("0\n\x00"), 0o644))
	n, err := Read(p)
	require.NoError(t, err)
	assert.Equal(t, uint64(0), n)

	got, err := Set(p, 8, Write)
	require.NoError(t, err)
	assert.Equal(t, uint64(8), got)

	// A kernel that allocates only 3: Set reports what it got.
	short := func(path string, count uint64) error { return Write(path, min(count, 3)) }
	got, err = Set(p, 8, short)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), got)

	require.NoError(t, os.WriteFile(p, []byte("lots"), 0o644))
	_, err = Read(p)
	assert.ErrorContains(t, err, `"lots" is not a page count`)
	_, err = Set(filepath.Join(t.TempDir(), "missing", "nr_hugepages"), 1, Write)
	assert.ErrorContains(t, err, "setting ")
}

// A pool file linked elsewhere is not written through, and a missing one
// is not created: the kernel's file or nothing.
func TestWriteRefusesLinksAndCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "nr_hugepages")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, 3); err == nil {
		t.Error("writing through a link succeeded")
	}
	if b, _ := os.ReadFile(target); string(b) != "7\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if err := Write(filepath.Join(dir, "missing"), 3); err == nil {
		t.Error("writing a missing pool file created it")
	}
}
