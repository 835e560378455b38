package render

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

// hugepagePlan lists every planned pool, the partitions' nodes and the
// excluded ones, zero counts included (a zero frees a pool the memory
// manager would otherwise count wrong). No pool is planned twice: the
// planner's rule, held where the plan entered.
func hugepagePlan(plan *planner.Plan) []hugepool.Pool {
	var out []hugepool.Pool
	for i := range plan.Partitions {
		out = append(out, PartitionHugepagePools(&plan.Partitions[i])...)
	}
	return append(out, nodePools(plan.Host.ExcludedMemory)...)
}

// PartitionHugepagePools are the pools planned on p's NUMA nodes, zero
// counts included: what its allocator daemon checks are still there
// (package nodecondition).
func PartitionHugepagePools(p *planner.Partition) []hugepool.Pool { return nodePools(p.Memory) }

func nodePools(ms []planner.NodeMemory) []hugepool.Pool {
	var out []hugepool.Pool
	for _, m := range ms {
		for _, h := range m.Hugepages {
			out = append(out, hugepool.Pool{Node: m.Node, PageSize: h.PageSize, Count: h.Count})
		}
	}
	return out
}

// HugepagePools are every planned pool, ascending by node, then page
// size: the oneshot's, which apply sets live too. The error is always nil:
// the planner's rules hold a plan's pools now (#39), and the signature
// stays until slices/apply's test helper stops expecting one.
func HugepagePools(plan *planner.Plan) ([]hugepool.Pool, error) {
	return hugepagePools(plan), nil
}

func hugepagePools(plan *planner.Plan) []hugepool.Pool {
	pools := hugepagePlan(plan)
	if pools == nil {
		pools = []hugepool.Pool{} // "hugepages": [] in the JSON
	}
	sort.Slice(pools, func(i, j int) bool {
		if pools[i].Node != pools[j].Node {
			return pools[i].Node < pools[j].Node
		}
		return pools[i].PageSize < pools[j].PageSize
	})
	return pools
}

// HugepageSpecs are the oneshot's arguments, largest pages first: 1 GiB
// pages need contiguous memory, so they are taken before 2 MiB pages
// fragment it. Within a size, ascending by node.
func HugepageSpecs(plan *planner.Plan) []string {
	specs := hugepagePlan(plan)
	hugepool.SortForAllocation(specs)
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.String()
	}
	return out
}

// KernelCmdline reserves the planned pages per node at boot, before memory
// fragments (per-node syntax: Linux >= 5.16):
// "hugepagesz=2M hugepages=0:512,1:512 hugepagesz=1G hugepages=0:4,1:4".
// Sizes ascend; nodes with no pages are left out. Empty when nothing is
// planned.
func KernelCmdline(plan *planner.Plan) string {
	specs := hugepagePlan(plan)
	bySize := map[uint64][]string{}
	var sizes []uint64
	sort.Slice(specs, func(i, j int) bool {
		if specs[i].PageSize != specs[j].PageSize {
			return specs[i].PageSize < specs[j].PageSize
		}
		return specs[i].Node < specs[j].Node
	})
	for _, s := range specs {
		if s.Count == 0 {
			continue
		}
		if _, ok := bySize[s.PageSize]; !ok {
			sizes = append(sizes, s.PageSize)
		}
		bySize[s.PageSize] = append(bySize[s.PageSize], fmt.Sprintf("%d:%d", s.Node, s.Count))
	}
	var parts []string
	for _, size := range sizes {
		parts = append(parts, "hugepagesz="+kernelSize(size)+" hugepages="+strings.Join(bySize[size], ","))
	}
	return strings.Join(parts, " ")
}

// kernelSize spells a page size the way the kernel's memparse reads it.
func kernelSize(b uint64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"G", 30}, {"M", 20}, {"K", 10}} {
		if b%(1<<u.shift) == 0 {
			return strconv.FormatUint(b>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatUint(b, 10)
}
