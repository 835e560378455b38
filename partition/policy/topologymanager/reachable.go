package topologymanager

import (
	"cmp"
	"math/bits"
	"slices"
)

// exactNodes is the largest machine whose non-preferred search is exact:
// duplicates are removed with a bitmap of all 2^n masks (8 KiB at 16
// nodes), so nothing is ever dropped.
const exactNodes = 16

// maxIntermediateMasks bounds the set of distinct partial ANDs kept while
// searching non-preferred candidates beyond exactNodes nodes; see
// docs/allocator.md ("Bounded search").
const maxIntermediateMasks = 1 << 14

// bestNonPreferredCount is BestNonPreferredAffinityCount (5.1.3): the
// largest, over lists, of the size of the list's narrowest raw mask.
func bestNonPreferredCount(l *lists) int {
	b := 0
	for i := range l.refs {
		b = max(b, int(l.refs[i].narrowest))
	}
	return b
}

// selector is kubelet's sequential compare over non-preferred candidates
// (5.1.6) in closed form, fed one distinct mask at a time in any order:
// a mask of exactly b nodes wins, else one of the largest size below b,
// else any; within the winning size the better mask.
type selector struct {
	m                *merger
	b                int
	at, below, above uint64
	hasAt, hasAbove  bool
	belowCount       int // size of below, 0 for none
}

func (s *selector) add(d uint64) {
	switch c := bits.OnesCount64(d); {
	case c == s.b:
		if !s.hasAt || s.m.better(d, s.at) {
			s.at, s.hasAt = d, true
		}
	case c < s.b:
		if c > s.belowCount || (c == s.belowCount && s.m.better(d, s.below)) {
			s.below, s.belowCount = d, c
		}
	default:
		if !s.hasAbove || s.m.better(d, s.above) {
			s.above, s.hasAbove = d, true
		}
	}
}

func (s *selector) best() (uint64, bool) {
	switch {
	case s.hasAt:
		return s.at, true
	case s.belowCount > 0:
		return s.below, true
	}
	return s.above, s.hasAbove
}

func (m *merger) bestNonPreferred(l *lists) (uint64, bool) {
	sel := selector{m: m, b: bestNonPreferredCount(l)}
	switch {
	case m.reachableWalk(l, &sel):
	case len(m.nodes) <= exactNodes:
		m.reachableExact(l, &sel)
	default:
		m.reachableBounded(l, &sel)
	}
	return sel.best()
}

// maxWalked is the largest product of the lists' lengths (hints with a
// machine node) that reachableWalk takes.
const maxWalked = 64

// reachableWalk feeds sel every non-empty AND of one hint per list, as
// kubelet's walk over the Cartesian product does, when there are at most
// maxWalked of them: the lists of one such hint are ANDed first, the
// others list by list, with no duplicate removal (the selector's choice
// does not depend on duplicates or order), in the scratch's buffers. This
// is the cheapest for the few short lists of most merges, at any machine
// size. It reports false, having fed nothing, for a larger product.
func (m *merger) reachableWalk(l *lists, sel *selector) bool {
	if l.sc == nil {
		l.sc = new(scratch)
	}
	bufs := &l.sc.walk
	// vals holds the masks of the lists of two or more, list after list,
	// ends[i] where the i-th such list's end.
	vals, ends := bufs.vals[:0], bufs.ends[:0]
	fixed, p := m.all, 1
	for i := range l.refs {
		start := len(vals)
		for _, h := range l.list(i) {
			if h.dense == 0 {
				continue
			}
			if len(vals) == len(bufs.vals) {
				return false
			}
			vals = append(vals, h.dense)
		}
		switch k := len(vals) - start; k {
		case 0:
			return true // no permutation ANDs to a machine node
		case 1:
			fixed &= vals[start]
			vals = vals[:start]
		default:
			if p *= k; p > maxWalked || len(ends) == len(bufs.ends) {
				return false
			}
			ends = append(ends, int32(len(vals)))
		}
	}
	if fixed == 0 {
		return true
	}
	cur := append(bufs.sets[0][:0], fixed)
	start := 0
	for i, end := range ends {
		next := bufs.sets[(i+1)%2][:0]
		list := vals[start:end]
		for _, s := range cur {
			for _, v := range list {
				if y := s & v; y != 0 {
					next = append(next, y)
				}
			}
		}
		if len(next) == 0 {
			return true
		}
		cur, start = next, int(end)
	}
	for _, d := range cur {
		sel.add(d)
	}
	return true
}

// walkBufs is reachableWalk's buffers: the partial ANDs, and the masks
// of the lists it walks (more than maxWalked masks, or more than 6 lists
// of two or more, is a product above maxWalked).
type walkBufs struct {
	sets [2][maxWalked]uint64
	vals [2 * maxWalked]uint64
	ends [6]int32
}

func setBit(b []uint64, d uint64)      { b[d/64] |= 1 << (d % 64) }
func hasBit(b []uint64, d uint64) bool { return b[d/64]&(1<<(d%64)) != 0 }

// takeBitmap is a zeroed dedupe bitmap of all 2^n masks: the merger's
// (9..exactNodes nodes), or a new one if another merge holds it.
// putBitmap gives a zeroed one back.
func (m *merger) takeBitmap() *[]uint64 {
	if p := m.bitmap.Swap(nil); p != nil {
		return p
	}
	b := make([]uint64, (1<<len(m.nodes))/64)
	return &b
}

func (m *merger) putBitmap(p *[]uint64) { m.bitmap.Store(p) }

// reachableExact feeds sel every distinct non-empty AND of one hint per
// list. The partial ANDs are kept as a list, with a bitmap over all 2^n
// masks to remove duplicates in one bit test, so a step costs |partial
// ANDs| × |distinct masks of the list| — never more than kubelet's walk
// over the same lists — and nothing is dropped. Short lists go first,
// which keeps the partial sets small; the result does not depend on the
// order.
func (m *merger) reachableExact(l *lists, sel *selector) {
	var small [4]uint64 // up to 8 nodes
	seen := small[:]
	if words := (1 << len(m.nodes)) / 64; words > len(small) {
		p := m.takeBitmap()
		defer m.putBitmap(p)
		seen = *p
	}
	var orderBuf [16]int
	order := orderBuf[:0]
	for i := range l.refs {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(l.refs[a].end-l.refs[a].start, l.refs[b].end-l.refs[b].start)
	})
	if l.sc == nil {
		l.sc = new(scratch)
	}
	sc := l.sc
	cur, next, vals := append(sc.cur[:0], m.all), sc.next[:0], sc.vals[:0]
	// The grown buffers go back to the scratch.
	defer func() { sc.cur, sc.next, sc.vals = cur, next, vals }()
	for _, i := range order {
		vals = vals[:0]
		for _, h := range l.list(i) {
			if d := h.dense; d != 0 && !hasBit(seen, d) {
				setBit(seen, d)
				vals = append(vals, d)
			}
		}
		unset(seen, vals)
		for _, s := range cur {
			for _, v := range vals {
				if y := s & v; y != 0 && !hasBit(seen, y) {
					setBit(seen, y)
					next = append(next, y)
				}
			}
		}
		unset(seen, next)
		if len(next) == 0 {
			return
		}
		cur, next = next, cur[:0]
	}
	for _, d := range cur {
		sel.add(d)
	}
}

// unset clears the bits of masks in b, all of which are set there.
func unset(b []uint64, masks []uint64) {
	if len(masks) > len(b) {
		clear(b)
		return
	}
	for _, d := range masks {
		b[d/64] = 0
	}
}

// reachableBounded is reachableExact beyond exactNodes nodes, where a
// bitmap of all masks is too large: the partial ANDs are a hash set, and
// when they exceed maxIntermediateMasks only the narrowest (by size, then
// number) are kept. What is kept depends on the order of the lists, so the
// lists are first put in a canonical order (by their sorted distinct masks):
// the answer is a function of the multiset of lists, whatever order the
// providers, resources and hints came in.
func (m *merger) reachableBounded(l *lists, sel *selector) {
	valLists := make([][]uint64, len(l.refs))
	for i := range l.refs {
		var vals []uint64
		for _, h := range l.list(i) {
			if h.dense != 0 {
				vals = append(vals, h.dense)
			}
		}
		slices.Sort(vals)
		valLists[i] = slices.Compact(vals)
	}
	slices.SortFunc(valLists, func(a, b []uint64) int {
		if c := cmp.Compare(len(a), len(b)); c != 0 {
			return c
		}
		return slices.Compare(a, b)
	})
	cur := map[uint64]struct{}{m.all: {}}
	for _, vals := range valLists {
		next := make(map[uint64]struct{}, len(cur))
		for s := range cur {
			for _, v := range vals {
				if x := s & v; x != 0 {
					next[x] = struct{}{}
				}
			}
		}
		if len(next) > maxIntermediateMasks {
			next = keepNarrowest(next)
		}
		cur = next
		if len(cur) == 0 {
			return
		}
	}
	for d := range cur {
		sel.add(d)
	}
}

// keepNarrowest applies the documented bound: only the
// maxIntermediateMasks narrowest masks (by size, then number) are kept.
func keepNarrowest(set map[uint64]struct{}) map[uint64]struct{} {
	all := make([]uint64, 0, len(set))
	for d := range set {
		all = append(all, d)
	}
	slices.SortFunc(all, func(a, b uint64) int {
		if c := cmp.Compare(bits.OnesCount64(a), bits.OnesCount64(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	kept := make(map[uint64]struct{}, maxIntermediateMasks)
	for _, d := range all[:maxIntermediateMasks] {
		kept[d] = struct{}{}
	}
	return kept
}
