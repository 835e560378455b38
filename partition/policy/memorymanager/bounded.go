package memorymanager

import (
	"math/bits"
	"slices"
)

// boundedBudget caps the node sets examined by one bounded hint
// calculation (partitions above ExactNodes nodes).
const boundedBudget = 1 << 15

// boundedHints caps the multi-node sets of unused nodes listed as hints
// (the numerically smallest are kept).
const boundedHints = 256

// boundedMasks replaces kubelet's walk over all 2^n node sets for
// partitions above ExactNodes nodes (kubelet refuses them unless
// max-allowable-numa-nodes is raised, and then needs exponential time).
// It returns:
//
//   - every admissible single node;
//   - every existing multi-node group that is admissible;
//   - when no single node is admissible: the admissible sets of unused
//     nodes of the smallest size s ≥ max(2, minAffinitySize) that has any,
//     searched up to the size of the smallest admissible group, in
//     ascending numeric order, until boundedBudget sets have been examined
//     or boundedHints found.
//
// minAffinitySize is exact when the smallest fitting size is found within
// the budget (always, when nodes are uniform). Preferred hints (size ==
// minAffinitySize) are therefore all listed, so whenever a preferred merge
// exists the result equals kubelet's. Differences are possible only for
// non-preferred results that kubelet would build from wider sets than the
// first admissible size, and when a bound is reached: then the listed
// multi-node hints are the numerically smallest, which contain kubelet's
// choice under the default (pack) order without prefer-closest or spread.
func (s *Static) boundedMasks(podUID string, r request) ([]uint64, int) {
	n := len(s.m.ids)
	budget := boundedBudget
	minSize := s.boundedMinSize(r, &budget)
	var masks []uint64
	for i := 0; i < n; i++ {
		mask := uint64(1) << i
		if s.allocatableFits(mask, r) && s.groupAllows(mask) && s.freeFits(podUID, mask, r) {
			masks = append(masks, mask)
		}
	}
	var unused []int
	groups := map[uint64]bool{}
	for i := 0; i < n; i++ {
		if s.m.assignments[i] == 0 {
			unused = append(unused, i)
		} else if bits.OnesCount64(s.m.cells[i]) > 1 {
			groups[s.m.cells[i]] = true
		}
	}
	singles := len(masks)
	smallestGroup := n + 1
	for g := range groups {
		if s.allocatableFits(g, r) && !s.violates(g) && s.freeFits(podUID, g, r) {
			masks = append(masks, g)
			smallestGroup = min(smallestGroup, bits.OnesCount64(g))
		}
	}
	if singles == 0 {
		listed := 0
		for size := max(2, minSize); size <= len(unused) && size <= smallestGroup && budget > 0; size++ {
			found := false
			forCombinations(len(unused), size, &budget, func(x uint64) bool {
				var mask uint64
				for y := x; y != 0; y &= y - 1 {
					mask |= 1 << unused[bits.TrailingZeros64(y)]
				}
				if s.allocatableFits(mask, r) && s.freeFits(podUID, mask, r) {
					masks = append(masks, mask)
					found = true
					listed++
				}
				return listed >= boundedHints
			})
			if found {
				break
			}
		}
	}
	slices.SortFunc(masks, func(a, b uint64) int {
		if narrower(a, b) {
			return -1
		}
		if narrower(b, a) {
			return 1
		}
		return 0
	})
	return slices.Compact(masks), minSize
}

// boundedMinSize is minAffinitySize: the smallest number of nodes whose
// allocatable covers every request. It starts from the per-resource greedy
// lower bound and checks sets of that size in numeric order.
func (s *Static) boundedMinSize(r request, budget *int) int {
	n := len(s.m.ids)
	lower := 1
	for i, col := range r.cols {
		var alloc []uint64
		for node := 0; node < n; node++ {
			if col >= 0 {
				alloc = append(alloc, s.m.tables[node][col].Allocatable)
			} else {
				alloc = append(alloc, 0)
			}
		}
		slices.Sort(alloc)
		var sum uint64
		k := 0
		for j := n - 1; j >= 0 && sum < r.sizes[i]; j-- {
			sum += alloc[j]
			k++
		}
		if sum < r.sizes[i] {
			return n // nothing fits; kubelet's initial value
		}
		lower = max(lower, k)
	}
	for size := lower; size < n; size++ {
		found := false
		forCombinations(n, size, budget, func(x uint64) bool {
			found = s.allocatableFits(x, r)
			return found
		})
		if found || *budget <= 0 {
			return size
		}
	}
	return n
}

// forCombinations calls f with every size-bit subset of n bits in
// ascending numeric order (Gosper's hack), while *budget lasts and f
// returns false.
func forCombinations(n, size int, budget *int, f func(uint64) bool) {
	if size <= 0 || size > n {
		return
	}
	x := ^uint64(0) >> (64 - size)
	for *budget > 0 {
		*budget--
		if f(x) {
			return
		}
		c := x & -x
		r := x + c
		if r == 0 {
			return
		}
		x = (((r ^ x) >> 2) / c) | r
		if n < 64 && x >= 1<<n {
			return
		}
	}
}
