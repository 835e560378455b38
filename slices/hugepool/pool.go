package hugepool

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
)

// Pool is one node's pool of one page size and its page count: what the
// plan wants (render), what the boot oneshot sets (`numa-partition
// hugepages apply NODE:SIZE=COUNT ...`) and what apply sets live.
type Pool struct {
	Node     int    `json:"node"`
	PageSize uint64 `json:"pageSize"` // bytes
	Count    uint64 `json:"count"`
}

// String is the oneshot's argument, NODE:SIZE=COUNT ("1:1Gi=4").
func (p Pool) String() string {
	return fmt.Sprintf("%d:%s=%d", p.Node, units.FormatBytes(p.PageSize), p.Count)
}

// minPageSize is the smallest page any kernel has.
const minPageSize = 4 << 10

// ParsePool reads NODE:SIZE=COUNT back, each number in its range: the
// node an id the kernel can have, the page size a page, the pages'
// bytes within 64 bits (Fill bounds them by the node's memory).
func ParsePool(s string) (Pool, error) {
	node, rest, ok := strings.Cut(s, ":")
	size, count, ok2 := strings.Cut(rest, "=")
	if !ok || !ok2 {
		return Pool{}, fmt.Errorf("hugepage spec %q: want NODE:SIZE=COUNT, e.g. 1:1Gi=4", s)
	}
	n, err := strconv.Atoi(node)
	if err != nil || n < 0 || n >= bitmask.MaxNodes || node[0] == '+' {
		return Pool{}, fmt.Errorf("hugepage spec %q: node %q is not a NUMA node id (0-%d)", s, node, bitmask.MaxNodes-1)
	}
	ps, err := units.ParseBytes(size)
	if err != nil || ps < minPageSize || ps&(ps-1) != 0 {
		return Pool{}, fmt.Errorf("hugepage spec %q: page size %q is not a power of two of at least 4Ki like 2Mi or 1Gi", s, size)
	}
	c, err := strconv.ParseUint(count, 10, 64)
	if err != nil || count[0] == '+' {
		return Pool{}, fmt.Errorf("hugepage spec %q: count %q is not a number of pages", s, count)
	}
	if c > ^uint64(0)/ps {
		return Pool{}, fmt.Errorf("hugepage spec %q: %d pages of %s are more than 16Ei of memory", s, c, units.FormatBytes(ps))
	}
	return Pool{Node: n, PageSize: ps, Count: c}, nil
}

// SortForAllocation orders pools largest page size first, then by node:
// 1 GiB pages need contiguous memory, so they are taken before 2 MiB
// pages fragment it.
func SortForAllocation(pools []Pool) {
	sort.SliceStable(pools, func(i, j int) bool {
		if pools[i].PageSize != pools[j].PageSize {
			return pools[i].PageSize > pools[j].PageSize
		}
		return pools[i].Node < pools[j].Node
	})
}
