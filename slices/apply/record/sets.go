package record

import (
	"fmt"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

// SliceSet is one slice's AllowedCPUs= and AllowedMemoryNodes=.
type SliceSet struct {
	Unit string          `json:"unit"`
	CPUs bitmask.CPUSet  `json:"cpus"`
	Mems bitmask.NodeSet `json:"mems"`
}

// HugepageTarget is a per-node hugepage count to allocate. Before is what
// the node had when numa-partition first touched it (restored by remove).
type HugepageTarget struct {
	Node     int    `json:"node"`
	PageSize uint64 `json:"pageSize"`
	Count    uint64 `json:"count"`
	Before   uint64 `json:"before"`
}

// Pool is the target as hugepool sets it; before, its count before.
func (h HugepageTarget) Pool(before bool) hugepool.Pool {
	if before {
		return hugepool.Pool{Node: h.Node, PageSize: h.PageSize, Count: h.Before}
	}
	return hugepool.Pool{Node: h.Node, PageSize: h.PageSize, Count: h.Count}
}

func (h HugepageTarget) String() string {
	return fmt.Sprintf("node%d %s=%d", h.Node, units.HugepageResource(h.PageSize), h.Count)
}
