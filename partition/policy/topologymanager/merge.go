package topologymanager

import (
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"

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
	// low: every machine id is below 64, so a set's machine nodes are in
	// its first word, machineW0 the machine's. contiguous: the ids are
	// shift..shift+n-1, so dense = first word >> shift.
	low        bool
	contiguous bool
	shift      int
	machineW0  uint64
	// words are the NodeSet words holding machine nodes and bit[id] is
	// node id's dense bit.
	words []int
	bit   []uint64
	dist  [][]int // dense distance matrix, nil without prefer-closest
	// distSums[d] is distSum(d) for every dense mask of a machine of up to
	// distTableNodes nodes with prefer-closest.
	distSums []int32
	load     func(bitmask.NodeSet) float64
	// The machine and every single node as results: read-only, shared by
	// all merges (most results are one of them), so they cost no
	// allocation. Up to setTableNodes nodes sets holds every dense mask's
	// node set, so no result allocates.
	machineSet *bitmask.NodeSet
	singleSets []bitmask.NodeSet
	sets       []bitmask.NodeSet
	// results caches the node sets of results beyond setTableNodes.
	results *[resultSlots]atomic.Pointer[resultEntry]
	// bitmap is a dedupe bitmap of all 2^n masks (9..exactNodes nodes),
	// zeroed, and scratch a merge's buffers, kept for the next merge; nil
	// while a merge holds them (a concurrent merge makes its own).
	bitmap  atomic.Pointer[[]uint64]
	scratch atomic.Pointer[scratch]
}

// scratch is the buffers of one merge. Reusing them rather than declaring
// them in the merge spares zeroing a few KiB every time; nothing in them
// is read before it is written.
type scratch struct {
	hs      []chint
	refs    []listRef
	foreign []*bitmask.NodeSet
	walk    walkBufs
	// reachableExact's partial ANDs and a list's distinct masks.
	cur, next, vals []uint64
}

// maxKept bounds the compiled hints, and the masks of each of
// reachableExact's buffers, a scratch keeps between merges (256 KiB and
// 128 KiB: a 12-node memory manager list).
const maxKept = 1 << 14

func (m *merger) takeScratch() *scratch {
	if sc := m.scratch.Swap(nil); sc != nil {
		return sc
	}
	return &scratch{hs: make([]chint, 0, 64), refs: make([]listRef, 0, 16), foreign: make([]*bitmask.NodeSet, 0, 4)}
}

// putScratch keeps the grown buffers, without the pointers into the
// caller's hints.
func (m *merger) putScratch(sc *scratch, l *lists) {
	for i := range l.refs { // a loop: clear's bulk barrier costs more for a few
		l.refs[i].src = nil
	}
	for i := range l.foreign {
		l.foreign[i] = nil
	}
	if cap(l.hs) > maxKept {
		l.hs = sc.hs
	}
	for _, b := range []*[]uint64{&sc.cur, &sc.next, &sc.vals} {
		if cap(*b) > maxKept {
			*b = nil
		}
	}
	sc.hs, sc.refs, sc.foreign = l.hs[:0], l.refs[:0], l.foreign[:0]
	m.scratch.Store(sc)
}

// resultEntry is a cached result node set: immutable once published.
type resultEntry struct {
	d   uint64
	set bitmask.NodeSet
}

// resultSlots is the size of the direct-mapped result cache.
const resultSlots = 256

// Up to these machine sizes the merger keeps a table of every mask's
// node set (32 KiB at 8 nodes) and of every mask's distance sum (16 KiB at
// 12 nodes).
const (
	setTableNodes  = 8
	distTableNodes = 12
)

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
	m.low = nodes[len(nodes)-1] < 64
	m.machineW0 = m.machine.Word(0)
	m.shift = nodes[0]
	m.contiguous = m.low && nodes[len(nodes)-1]-nodes[0] == len(nodes)-1
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
	if len(nodes) <= setTableNodes {
		m.sets = make([]bitmask.NodeSet, 1<<len(nodes))
		for d := range m.sets {
			m.sets[d] = m.sparse(uint64(d))
		}
	} else {
		m.results = new([resultSlots]atomic.Pointer[resultEntry])
	}
	m.closest = o.PreferClosestNUMA && o.Policy != PolicySingleNUMANode
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
		if len(nodes) <= distTableNodes {
			// distSum(d) = distSum(d without its lowest node i) + the
			// distances from i to every node of d and back, less d(i,i).
			m.distSums = make([]int32, 1<<len(nodes))
			for d := 1; d < len(m.distSums); d++ {
				i := bits.TrailingZeros(uint(d))
				sum := m.distSums[d&(d-1)] - int32(m.dist[i][i])
				for y := d; y != 0; y &= y - 1 {
					j := bits.TrailingZeros(uint(y))
					sum += int32(m.dist[i][j] + m.dist[j][i])
				}
				m.distSums[d] = sum
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

// denseWord is dense for a machine of ids below 64, given the set's first
// word.
func (m *merger) denseWord(w0 uint64) uint64 {
	if m.contiguous {
		return w0 >> m.shift & m.all
	}
	var d uint64
	for x := w0 & m.machineW0; x != 0; x &= x - 1 {
		d |= m.bit[bits.TrailingZeros64(x)]
	}
	return d
}

// dense maps a node set to the dense form, dropping non-machine nodes.
func (m *merger) dense(s *bitmask.NodeSet) uint64 {
	ws := words(s)
	if m.low {
		return m.denseWord(ws[0])
	}
	mw := words(&m.machine)
	var d uint64
	for _, w := range m.words {
		for x := ws[w] & mw[w]; x != 0; x &= x - 1 {
			d |= m.bit[w*64+bits.TrailingZeros64(x)]
		}
	}
	return d
}

// sparse maps a dense mask back to node ids.
func (m *merger) sparse(d uint64) bitmask.NodeSet {
	var s bitmask.NodeSet
	w := words(&s)
	if m.contiguous {
		w[0] = d << m.shift
		return s
	}
	for ; d != 0; d &= d - 1 {
		id := m.nodes[bits.TrailingZeros64(d)]
		w[id/64] |= 1 << (id % 64)
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
	if m.distSums != nil {
		return int(m.distSums[d])
	}
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
	case m.sets != nil:
		return Hint{Affinity: &m.sets[d], Preferred: preferred}
	case d == m.all:
		return Hint{Affinity: m.machineSet, Preferred: preferred}
	case d&(d-1) == 0:
		return Hint{Affinity: &m.singleSets[bits.TrailingZeros64(d)], Preferred: preferred}
	}
	// A direct-mapped cache: a merge finds the set a recent merge made
	// for the same mask, or makes it and takes the slot.
	slot := &m.results[(d*0x9e3779b97f4a7c15)>>(64-8)]
	if e := slot.Load(); e != nil && e.d == d {
		return Hint{Affinity: &e.set, Preferred: preferred}
	}
	e := &resultEntry{d: d, set: m.sparse(d)}
	slot.Store(e)
	return Hint{Affinity: &e.set, Preferred: preferred}
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
	sc := m.takeScratch()
	l := lists{hs: sc.hs, refs: sc.refs, foreign: sc.foreign, sc: sc}
	m.compile(providers, &l)
	d, preferred, one := m.onePermutation(&l)
	if !one {
		d, preferred = m.bestPreferred(&l)
		if !preferred {
			var ok bool
			if d, ok = m.bestNonPreferred(&l); !ok {
				d = m.all
			}
		}
	}
	m.putScratch(sc, &l)
	return m.result(d, preferred)
}

// onePermutation merges lists of one hint each, kubelet's only
// permutation then (5.1.4): the AND of the hints' masks (a don't-care is
// the machine), preferred when every hint is and every hint with a mask
// has the same raw mask (foreign nodes included); an empty AND is no
// candidate, and kubelet answers the machine, not preferred. one is
// false when a list holds more hints (the searches decide then). The
// most common merge of all, one container's CPU and memory hints, skips
// the preferred and reachable searches' setup.
func (m *merger) onePermutation(l *lists) (d uint64, preferred, one bool) {
	d, preferred = m.all, true
	var raw *chint // the first hint with a mask
	for i := range l.refs {
		r := &l.refs[i]
		if r.end-r.start != 1 {
			return 0, false, false
		}
		h := &l.hs[r.start]
		d &= h.dense
		switch {
		case !h.pref:
			preferred = false
		case h.isNil:
		case raw == nil:
			raw = h
		case l.cmpRaw(h, raw) != 0:
			preferred = false
		}
	}
	if d == 0 {
		return m.all, false, true
	}
	return d, preferred, true
}
