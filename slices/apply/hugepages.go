package apply

import (
	"fmt"
	"github.com/numa-partition/numa-partition/slices/hugepool"

	"github.com/numa-partition/numa-partition/numa/units"
)

// writePool sets a pool; a test swaps it to play a kernel that falls short.
var writePool hugepool.Writer = hugepool.Write

// setHugepages sets the node's pool and returns what the kernel allocated.
func setHugepages(sysfs string, h HugepageTarget) (uint64, error) {
	got, err := hugepool.Set(hugepool.Path(sysfs, h.Node, h.PageSize), h.Count, writePool)
	if err != nil {
		return 0, fmt.Errorf("allocating %s: %w", h, err)
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
