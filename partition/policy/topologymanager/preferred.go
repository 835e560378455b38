package topologymanager

import "slices"

// candidate is one raw mask R of the pivot list and the number of lists
// seen so far that offer it preferred.
type candidate struct {
	h    int32 // index in lists.hs
	hits int
	last int // the last list that counted, so duplicates count once
}

// bestPreferred is the best preferred merge result (5.1.4), if any: the
// machine when every list holds a preferred don't-care, and machine∧R for
// every raw R that each list offers preferred (or covers with a preferred
// don't-care). R is drawn from the pivot, the list without a preferred
// don't-care that has the fewest preferred masks.
func (m *merger) bestPreferred(l *lists) (uint64, bool) {
	pivot, pivotCount, required := -1, int32(0), 0
	var skipBuf [16]bool
	skip := skipBuf[:0] // copies of earlier lists and lists with a preferred don't-care
	for i := range l.refs {
		r := &l.refs[i]
		skip = append(skip, true)
		if r.same || r.prefNil {
			continue
		}
		if r.prefs == 0 {
			return 0, false
		}
		skip[i] = false
		required++
		if pivot < 0 || r.prefs < pivotCount {
			pivot, pivotCount = i, r.prefs
		}
	}
	if pivot < 0 {
		return m.bestPreferredAllNil(l), true
	}
	if int(pivotCount)*len(l.hs) <= 256 {
		return m.bestPreferredScan(l, pivot, skip)
	}
	return m.bestPreferredSorted(l, pivot, skip, required)
}

// bestPreferredScan checks every candidate R of the pivot against every
// list by a scan: the cheapest for the few short lists of most merges.
func (m *merger) bestPreferredScan(l *lists, pivot int, skip []bool) (uint64, bool) {
	var best uint64
	found := false
	for r := l.refs[pivot].start; r < l.refs[pivot].end; r++ {
		c := &l.hs[r]
		if !c.pref || c.isNil || c.dense == 0 || (found && !m.better(c.dense, best)) {
			continue
		}
		if l.offeredByAll(c, skip) {
			best, found = c.dense, true
		}
	}
	return best, found
}

// offeredByAll: every list not skipped offers raw mask c preferred.
func (l *lists) offeredByAll(c *chint, skip []bool) bool {
	for i := range l.refs {
		if skip[i] {
			continue
		}
		offered := false
		for j := l.refs[i].start; j < l.refs[i].end && !offered; j++ {
			h := &l.hs[j]
			offered = h.pref && !h.isNil && l.cmpRaw(h, c) == 0
		}
		if !offered {
			return false
		}
	}
	return true
}

// bestPreferredSorted is the same for long lists: the candidates are
// sorted, so that checking a list costs one binary search per hint.
func (m *merger) bestPreferredSorted(l *lists, pivot int, skip []bool, required int) (uint64, bool) {
	if len(l.foreign) == 0 {
		return m.bestPreferredDense(l, pivot, skip)
	}
	var buf [16]candidate
	cands := buf[:0]
	for j := l.refs[pivot].start; j < l.refs[pivot].end; j++ {
		if h := &l.hs[j]; h.pref && !h.isNil && h.dense != 0 {
			cands = append(cands, candidate{h: j, last: -1})
		}
	}
	raw := func(a, b candidate) int { return l.cmpRaw(&l.hs[a.h], &l.hs[b.h]) }
	slices.SortFunc(cands, raw)
	cands = slices.CompactFunc(cands, func(a, b candidate) bool { return raw(a, b) == 0 })
	for i := range l.refs {
		if skip[i] {
			continue
		}
		for j := l.refs[i].start; j < l.refs[i].end; j++ {
			if h := &l.hs[j]; !h.pref || h.isNil {
				continue
			}
			k, found := slices.BinarySearchFunc(cands, j, func(c candidate, t int32) int { return l.cmpRaw(&l.hs[c.h], &l.hs[t]) })
			if found && cands[k].last != i {
				cands[k].hits++
				cands[k].last = i
			}
		}
	}
	var best uint64
	found := false
	for _, c := range cands {
		if d := l.hs[c.h].dense; c.hits == required && (!found || m.better(d, best)) {
			best, found = d, true
		}
	}
	return best, found
}

// bestPreferredAllNil: every list holds a preferred don't-care, so the
// machine is a candidate and so is machine∧R for any preferred R anywhere.
func (m *merger) bestPreferredAllNil(l *lists) uint64 {
	best := m.all
	for _, h := range l.hs {
		if h.pref && !h.isNil && h.dense != 0 && m.better(h.dense, best) {
			best = h.dense
		}
	}
	return best
}

// bestPreferredDense is bestPreferredSorted when no hint names a node
// outside the machine, so that a raw mask is its dense mask: the
// candidates are a sorted []uint64, and each list in turn keeps those it
// offers, so later lists search fewer.
func (m *merger) bestPreferredDense(l *lists, pivot int, skip []bool) (uint64, bool) {
	var buf [64]uint64
	var markBuf [64]bool
	cands := buf[:0]
	for _, h := range l.list(pivot) {
		if h.pref && !h.isNil && h.dense != 0 {
			cands = append(cands, h.dense)
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	marks := markBuf[:]
	if len(cands) > len(marks) {
		marks = make([]bool, len(cands))
	}
	for i := range l.refs {
		if skip[i] || i == pivot {
			continue
		}
		clear(marks[:len(cands)])
		for _, h := range l.list(i) {
			if h.pref && !h.isNil {
				if k, ok := slices.BinarySearch(cands, h.dense); ok {
					marks[k] = true
				}
			}
		}
		kept := cands[:0]
		for k, d := range cands {
			if marks[k] {
				kept = append(kept, d)
			}
		}
		if cands = kept; len(cands) == 0 {
			return 0, false
		}
	}
	if len(cands) == 0 {
		return 0, false
	}
	best := cands[0]
	for _, d := range cands[1:] {
		if m.better(d, best) {
			best = d
		}
	}
	return best, true
}
