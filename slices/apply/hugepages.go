package apply

import (
	"fmt"
	"github.com/numa-partition/numa-partition/slices/hugepool"

	"github.com/numa-partition/numa-partition/numa/units"
)

// setHugepages sets the node's pool through write and returns what the
// kernel allocated.
func setHugepages(write hugepool.Writer, sysfs string, h HugepageTarget) (uint64, error) {
	got, err := hugepool.Set(hugepool.Path(sysfs, h.Node, h.PageSize), h.Count, write)
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
