package topologymanager

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// maxIntermediateMasks bounds the set of distinct partial ANDs kept while
// searching non-preferred candidates. With at most 8 nodes there are at
// most 255 non-empty masks, so the bound never applies at kubelet's
// default limit; beyond it see docs/allocator.md ("Bounded search").
const maxIntermediateMasks = 1 << 14

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
	dist     [][]int // dense distance matrix, nil without prefer-closest
	load     func(bitmask.NodeSet) float64
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
func (m *merger) dense(s bitmask.NodeSet) uint64 {
	if m.identity {
		return s.Word(0) & m.all
	}
	var d uint64
	for i, id := range m.nodes {
		if s.Has(id) {
			d |= 1 << i
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
	s := m.sparse(d)
	return Hint{Affinity: &s, Preferred: preferred}
}

// chint is a hint compiled for the merge.
type chint struct {
	raw   *bitmask.NodeSet // nil: don't care
	dense uint64           // machine ∧ raw in dense form; the machine for don't care
	count int              // popcount of the raw mask
	pref  bool
}

func (a *chint) sameRaw(b *chint) bool {
	return a.count == b.count && a.dense == b.dense && *a.raw == *b.raw
}

// lists is the flattened hint lists (semantics 5.1.1), compiled: list i is
// hs[ends[i-1]:ends[i]].
type lists struct {
	hs   []chint
	ends []int
	// same[i] is true when list i is the very slice of an earlier list
	// (the memory manager gives every resource one shared list). Such a
	// list changes nothing for preferred candidates and is skipped there.
	same []bool
}

func (l *lists) list(i int) []chint {
	start := 0
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.hs[start:l.ends[i]]
}

// compile flattens the providers' answers as kubelet's
// filterProvidersHints does: a nil or empty provider map and a nil list
// become [{nil, preferred}], a non-nil empty list [{nil, not preferred}].
// singleNUMA applies the single-numa-node filter (5.1.2): only preferred
// hints that are don't-care or exactly one node are kept. It reports false
// when a list ends up empty (no permutation at all).
func (m *merger) compile(providers []ProviderHints, singleNUMA bool) (lists, bool) {
	l := lists{hs: make([]chint, 0, 16), ends: make([]int, 0, 8), same: make([]bool, 0, 8)}
	type ident struct {
		first *Hint
		n     int
	}
	var seen []ident
	add := func(h Hint) {
		c := chint{raw: h.Affinity, pref: h.Preferred, dense: m.all}
		if h.Affinity != nil {
			c.count = h.Affinity.Len()
			c.dense = m.dense(*h.Affinity)
		}
		if singleNUMA && (!c.pref || (c.raw != nil && c.count != 1)) {
			return
		}
		l.hs = append(l.hs, c)
	}
	end := func(src []Hint) bool {
		if len(l.hs) == 0 || (len(l.ends) > 0 && l.ends[len(l.ends)-1] == len(l.hs)) {
			return false
		}
		l.ends = append(l.ends, len(l.hs))
		same := false
		if len(src) > 0 {
			id := ident{&src[0], len(src)}
			same = slices.Contains(seen, id)
			seen = append(seen, id)
		}
		l.same = append(l.same, same)
		return true
	}
	for _, p := range providers {
		if len(p) == 0 {
			add(DontCare(true))
			if !end(nil) {
				return l, false
			}
			continue
		}
		for _, hints := range p {
			switch {
			case hints == nil:
				add(DontCare(true))
			case len(hints) == 0:
				add(DontCare(false))
			default:
				for _, h := range hints {
					add(h)
				}
			}
			if !end(hints) {
				return l, false
			}
		}
	}
	return l, true
}

// merge computes kubelet's mergeFilteredHints result in closed form
// (5.1.4-5.1.6) without walking the Cartesian product:
//
//   - A preferred permutation picks, in every list, a preferred don't-care
//     hint or a preferred hint whose raw mask is one common R. So the
//     preferred candidates are "machine" (every list has a preferred
//     don't-care) and machine∧R for every R such that each list holds a
//     preferred don't-care or a preferred R. Preferred always wins.
//   - Otherwise every candidate is non-preferred and only the set of
//     reachable non-empty ANDs matters; it is built list by list (at most
//     2^n masks, 255 at 8 nodes) and the closed-form selection around
//     BestNonPreferredAffinityCount picks from it.
func (m *merger) merge(providers []ProviderHints, singleNUMA bool) Hint {
	l, ok := m.compile(providers, singleNUMA)
	if !ok { // a list filtered empty: no permutation, no candidate
		return m.result(m.all, false)
	}
	if d, ok := m.bestPreferred(&l); ok {
		return m.result(d, true)
	}
	if d, ok := m.bestNonPreferred(&l); ok {
		return m.result(d, false)
	}
	return m.result(m.all, false)
}

func (m *merger) bestPreferred(l *lists) (uint64, bool) {
	// The list with no preferred don't-care and the fewest preferred
	// masks drives the search: R must be one of its masks.
	pivot, allNil := -1, true
	pivotCount := 0
	for i := range l.ends {
		if l.same[i] {
			continue
		}
		hasNil, count := false, 0
		for _, h := range l.list(i) {
			if h.pref {
				if h.raw == nil {
					hasNil = true
				} else {
					count++
				}
			}
		}
		if hasNil {
			continue
		}
		allNil = false
		if count == 0 {
			return 0, false
		}
		if pivot < 0 || count < pivotCount {
			pivot, pivotCount = i, count
		}
	}
	var best uint64
	found := false
	if allNil {
		best, found = m.all, true
	}
	tryR := func(r *chint) {
		if r.dense == 0 || (found && !m.better(r.dense, best)) {
			return
		}
		for i := range l.ends {
			if !l.same[i] && !hasPreferredNilOr(l.list(i), r) {
				return
			}
		}
		best, found = r.dense, true
	}
	for i := range l.ends {
		if pivot >= 0 && i != pivot {
			continue
		}
		hs := l.list(i)
		for j := range hs {
			if hs[j].pref && hs[j].raw != nil {
				tryR(&hs[j])
			}
		}
	}
	return best, found
}

func hasPreferredNilOr(l []chint, r *chint) bool {
	for i := range l {
		if l[i].pref && (l[i].raw == nil || l[i].sameRaw(r)) {
			return true
		}
	}
	return false
}

// bestNonPreferredCount is BestNonPreferredAffinityCount (5.1.3): the
// largest, over lists, of the size of the list's narrowest raw mask.
func bestNonPreferredCount(l *lists) int {
	b := 0
	for i := range l.ends {
		narrowest := -1
		for _, h := range l.list(i) {
			if h.raw != nil && (narrowest < 0 || h.count < narrowest) {
				narrowest = h.count
			}
		}
		b = max(b, narrowest)
	}
	return b
}

func (m *merger) bestNonPreferred(l *lists) (uint64, bool) {
	reach := m.reachable(l)
	if len(reach) == 0 {
		return 0, false
	}
	b := bestNonPreferredCount(l)
	// Class: exactly B nodes; else the largest size below B; else any.
	class := -1
	for _, d := range reach {
		c := bits.OnesCount64(d)
		switch {
		case c == b:
			class = b
		case c < b && class != b && c > class:
			class = c
		}
	}
	var best uint64
	found := false
	for _, d := range reach {
		if class >= 0 && bits.OnesCount64(d) != class {
			continue
		}
		if !found || m.better(d, best) {
			best, found = d, true
		}
	}
	return best, found
}

// reachable returns the distinct non-empty ANDs of one hint per list.
func (m *merger) reachable(l *lists) []uint64 {
	if len(m.nodes) <= 8 {
		return m.reachableSmall(l)
	}
	cur := map[uint64]struct{}{m.all: {}}
	var vals []uint64
	for i := range l.ends {
		vals = vals[:0]
		for _, h := range l.list(i) {
			if h.dense != 0 && !slices.Contains(vals, h.dense) {
				vals = append(vals, h.dense)
			}
		}
		next := make(map[uint64]struct{}, len(cur))
		for _, v := range vals {
			for s := range cur {
				if x := s & v; x != 0 {
					next[x] = struct{}{}
				}
			}
		}
		if len(next) > maxIntermediateMasks {
			next = m.keepNarrowest(next)
		}
		cur = next
		if len(cur) == 0 {
			return nil
		}
	}
	out := make([]uint64, 0, len(cur))
	for d := range cur {
		out = append(out, d)
	}
	return out
}

// keepNarrowest applies the documented bound: when the partial ANDs exceed
// maxIntermediateMasks, only the narrowest ones (by size, then number) are
// kept. Only possible beyond 8 nodes.
func (m *merger) keepNarrowest(set map[uint64]struct{}) map[uint64]struct{} {
	all := make([]uint64, 0, len(set))
	for d := range set {
		all = append(all, d)
	}
	slices.SortFunc(all, func(a, b uint64) int {
		if ca, cb := bits.OnesCount64(a), bits.OnesCount64(b); ca != cb {
			return ca - cb
		}
		if a < b {
			return -1
		}
		return 1
	})
	kept := make(map[uint64]struct{}, maxIntermediateMasks)
	for _, d := range all[:maxIntermediateMasks] {
		kept[d] = struct{}{}
	}
	return kept
}

// reachableSmall is reachable for at most 8 nodes with 256-bit sets.
func (m *merger) reachableSmall(l *lists) []uint64 {
	var cur [4]uint64
	cur[m.all/64] |= 1 << (m.all % 64)
	var vals [256]uint64
	for i := range l.ends {
		var seen [4]uint64
		nv := 0
		for _, h := range l.list(i) {
			d := h.dense
			if d != 0 && seen[d/64]&(1<<(d%64)) == 0 {
				seen[d/64] |= 1 << (d % 64)
				vals[nv] = d
				nv++
			}
		}
		var next [4]uint64
		for w := range cur {
			for x := cur[w]; x != 0; x &= x - 1 {
				s := uint64(w*64 + bits.TrailingZeros64(x))
				for _, v := range vals[:nv] {
					if y := s & v; y != 0 {
						next[y/64] |= 1 << (y % 64)
					}
				}
			}
		}
		cur = next
		if cur == [4]uint64{} {
			return nil
		}
	}
	var out []uint64
	for w := range cur {
		for x := cur[w]; x != 0; x &= x - 1 {
			out = append(out, uint64(w*64+bits.TrailingZeros64(x)))
		}
	}
	return out
}
