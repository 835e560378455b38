package topologymanager

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// merger holds the machine and the mask order (semantics 5.1.5). Masks are
// "dense": bit i is the i-th smallest machine node id, which keeps kubelet's
// numeric order because ids are mapped monotonically.
type merger struct {
	nodes   []int
	machine bitmask.NodeSet
	all     uint64 // dense machine mask
	closest bool
	// identity: the machine is nodes 0..n-1, so dense = the set's first word.
	identity bool
	// Otherwise words are the NodeSet words holding machine nodes and
	// bit[id] is node id's dense bit.
	words []int
	bit   []uint64
	dist  [][]int // dense distance matrix, nil without prefer-closest
	load  func(bitmask.NodeSet) float64
	// The machine and every single node as results: read-only, shared by
	// all merges (most results are one of them), so they cost no allocation.
	machineSet *bitmask.NodeSet
	singleSets []bitmask.NodeSet
}

func newMerger(o Options) (*merger, error) {
	nodes := slices.Clone(o.NUMANodes)
	slices.Sort(nodes)
	if len(slices.Compact(slices.Clone(nodes))) != len(nodes) {
		return nil, fmt.Errorf("topology manager: duplicate NUMA node id in %v", o.NUMANodes)
	}
	if len(nodes) > MaxNUMANodes {
		return nil, fmt.Errorf("topology manager: %d NUMA nodes, at most %d are supported in one partition", len(nodes), MaxNUMANodes)
	}
	m := &merger{nodes: nodes, all: ^uint64(0) >> (64 - len(nodes))}
	for _, id := range nodes {
		if id < 0 || id >= bitmask.MaxNodes {
			return nil, fmt.Errorf("topology manager: NUMA node id %d out of range 0..%d", id, bitmask.MaxNodes-1)
		}
		m.machine = m.machine.Add(id)
	}
	m.identity = nodes[len(nodes)-1] == len(nodes)-1
	m.bit = make([]uint64, nodes[len(nodes)-1]+1)
	for i, id := range nodes {
		m.bit[id] = 1 << i
		if w := id / 64; !slices.Contains(m.words, w) {
			m.words = append(m.words, w)
		}
		m.singleSets = append(m.singleSets, bitmask.NewNodeSet(id))
	}
	machine := m.machine
	m.machineSet = &machine
	m.closest = o.PreferClosestNUMANodes && o.Policy != PolicySingleNUMANode
	if m.closest {
		m.dist = make([][]int, len(nodes))
		for i, a := range nodes {
			m.dist[i] = make([]int, len(nodes))
			for j, b := range nodes {
				d, ok := o.Distances[a][b]
				if !ok {
					return nil, fmt.Errorf("cannot discover NUMA topology: error getting NUMA distances from cadvisor: no distance from node %d to node %d", a, b)
				}
				m.dist[i][j] = d
			}
		}
	}
	switch o.TieBreak {
	case "", TieBreakPack:
	case TieBreakSpread:
		if o.Load == nil {
			return nil, fmt.Errorf("tie-break %q needs a load function", TieBreakSpread)
		}
		m.load = o.Load
	default:
		return nil, fmt.Errorf("tie-break %q: allowed are %s (kubelet) and %s", o.TieBreak, TieBreakPack, TieBreakSpread)
	}
	return m, nil
}

// dense maps a node set to the dense form, dropping non-machine nodes.
func (m *merger) dense(s *bitmask.NodeSet) uint64 {
	if m.identity {
		return s.Word(0) & m.all
	}
	var d uint64
	for _, w := range m.words {
		for x := s.Word(w) & m.machine.Word(w); x != 0; x &= x - 1 {
			d |= m.bit[w*64+bits.TrailingZeros64(x)]
		}
	}
	return d
}

// sparse maps a dense mask back to node ids.
func (m *merger) sparse(d uint64) bitmask.NodeSet {
	var s bitmask.NodeSet
	for d != 0 {
		i := bits.TrailingZeros64(d)
		s = s.Add(m.nodes[i])
		d &= d - 1
	}
	return s
}

// better reports whether dense mask a beats b (5.1.5): fewer nodes, then
// (prefer-closest) smaller average distance, then (spread) lower load,
// then the numerically smaller mask.
func (m *merger) better(a, b uint64) bool {
	ca, cb := bits.OnesCount64(a), bits.OnesCount64(b)
	if ca != cb {
		return ca < cb
	}
	if m.closest {
		// Equal sizes: comparing the sums is comparing the averages.
		da, db := m.distSum(a), m.distSum(b)
		if da != db {
			return da < db
		}
	}
	if m.load != nil {
		la, lb := m.load(m.sparse(a)), m.load(m.sparse(b))
		if la != lb {
			return la < lb
		}
	}
	return a < b
}

func (m *merger) distSum(d uint64) int {
	sum := 0
	for x := d; x != 0; x &= x - 1 {
		i := bits.TrailingZeros64(x)
		for y := d; y != 0; y &= y - 1 {
			sum += m.dist[i][bits.TrailingZeros64(y)]
		}
	}
	return sum
}

func (m *merger) result(d uint64, preferred bool) Hint {
	switch {
	case d == m.all:
		return Hint{Affinity: m.machineSet, Preferred: preferred}
	case d&(d-1) == 0:
		return Hint{Affinity: &m.singleSets[bits.TrailingZeros64(d)], Preferred: preferred}
	}
	s := m.sparse(d)
	return Hint{Affinity: &s, Preferred: preferred}
}

// merge computes kubelet's mergeFilteredHints result in closed form
// (5.1.4-5.1.6) without walking the Cartesian product:
//
//   - A preferred permutation picks, in every list, a preferred don't-care
//     hint or a preferred hint whose raw mask is one common R. So the
//     preferred candidates are "machine" (every list has a preferred
//     don't-care) and machine∧R for every R such that each list holds a
//     preferred don't-care or a preferred R. Preferred always wins
//     (preferred.go).
//   - Otherwise every candidate is non-preferred and only the set of
//     reachable non-empty ANDs matters; it is built list by list and the
//     closed-form selection around BestNonPreferredAffinityCount picks from
//     it (reachable.go).
//
// Every step depends on the lists only as a multiset of sets of hints, and
// the bounded search beyond exactNodes sees them in a canonical order, so
// the answer does not depend on the order of providers, resources or hints.
func (m *merger) merge(providers []ProviderHints) Hint {
	var hs [32]chint
	var refs [16]listRef
	var foreign [4]*bitmask.NodeSet
	l := m.compile(providers, lists{hs: hs[:0], refs: refs[:0], foreign: foreign[:0]})
	if d, ok := m.bestPreferred(&l); ok {
		return m.result(d, true)
	}
	if d, ok := m.bestNonPreferred(&l); ok {
		return m.result(d, false)
	}
	return m.result(m.all, false)
}
