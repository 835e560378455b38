// Package hugepool is the hugepage pools: what one is (Pool, written
// NODE:SIZE=COUNT), how they are filled, and reading and setting one
// (nodeN/hugepages/hugepages-<size>kB/nr_hugepages). It is the one place
// that writes the pools: the boot oneshot (`numa-partition hugepages
// apply`) and apply/remove both go through it.
package hugepool

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// Path is the nr_hugepages file of one node and page size under a sysfs root.
func Path(sysfs string, node int, pageSize uint64) string {
	return filepath.Join(sysfs, hostpaths.NodePoolRel(node, pageSize))
}

// maxPoolValue bounds nr_hugepages: one decimal number.
const maxPoolValue = 64

// Read reads a pool's page count, strictly.
func Read(path string) (uint64, error) {
	b, err := fsutil.ReadFileBounded(path, maxPoolValue)
	if err != nil {
		return 0, err
	}
	v := bitmask.Trim(string(b))
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a page count", path, v)
	}
	return n, nil
}

// Writer sets a pool; tests pass their own to play a kernel that falls short.
type Writer func(path string, count uint64) error

// Write is the real Writer. The pool file must be there and be that file:
// nothing is created, a link is not followed (a dump or --root with
// nr_hugepages linked elsewhere must not write elsewhere), a FIFO does not
// block.
func Write(path string, count uint64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(strconv.FormatUint(count, 10)); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// Set asks the kernel for count pages and reads back what it allocated: the
// kernel gives what it can and says so only in the file, so a shortfall is
// visible there and nowhere else.
func Set(path string, count uint64, write Writer) (uint64, error) {
	if err := write(path, count); err != nil {
		return 0, fmt.Errorf("setting %s to %d: %w", path, count, err)
	}
	got, err := Read(path)
	if err != nil {
		return 0, fmt.Errorf("reading back %s: %w", path, err)
	}
	return got, nil
}
