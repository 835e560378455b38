package apply

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/units"
)

// hugepageFile is a node's per-size hugepage file under a sysfs root.
func hugepageFile(sysfs string, node int, pageSize uint64, file string) string {
	return filepath.Join(sysfs, "devices/system/node", fmt.Sprintf("node%d", node),
		"hugepages", fmt.Sprintf("hugepages-%dkB", pageSize/1024), file)
}

func readCount(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a page count: %w", path, strings.TrimSpace(string(b)), err)
	}
	return n, nil
}

// writePool sets a pool; a test swaps it to play a kernel that falls short.
var writePool = func(path string, count uint64) error {
	return os.WriteFile(path, []byte(strconv.FormatUint(count, 10)), 0o644)
}

// setHugepages writes the node's nr_hugepages and reads it back: the kernel
// allocates what it can and says so in the file, so a shortfall is only
// visible there.
func setHugepages(sysfs string, h HugepageTarget) (got uint64, err error) {
	p := hugepageFile(sysfs, h.Node, h.PageSize, "nr_hugepages")
	if err := writePool(p, h.Count); err != nil {
		return 0, fmt.Errorf("allocating %s: %w", h, err)
	}
	got, err = readCount(p)
	if err != nil {
		return 0, fmt.Errorf("reading back %s: %w", h, err)
	}
	return got, nil
}

// Shortfall is a hugepage pool the kernel could not fill.
type Shortfall struct {
	Node     int    `json:"node"`
	PageSize uint64 `json:"pageSize"`
	Wanted   uint64 `json:"wanted"`
	Got      uint64 `json:"got"`
}

func (s Shortfall) String() string {
	return fmt.Sprintf("node%d %s: wanted %d pages, the kernel allocated %d (%s short); "+
		"reserve them at boot (hugepagesz=/hugepages= on the kernel command line) or free memory and apply again",
		s.Node, units.HugepageResource(s.PageSize), s.Wanted, s.Got, units.FormatBytes((s.Wanted-s.Got)*s.PageSize))
}
