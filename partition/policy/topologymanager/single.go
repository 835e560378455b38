package topologymanager

// mergeSingle is the single-numa-node merge (5.1.2-5.1.7) as per-node
// checks, without compiling the lists. After the policy's filter every
// hint is a preferred don't-care or a preferred single node, so two
// different non-nil hints AND to nothing and every non-empty candidate is
// preferred: node i when each list offers {i} or a don't-care and at least
// one offers {i}; the machine when every list offers a don't-care. A list
// the filter empties leaves no permutation: {machine, not preferred}.
func (m *merger) mergeSingle(providers []ProviderHints) (uint64, bool) {
	allDC := true
	inter, union := m.all, uint64(0)
	for _, p := range providers {
		for _, hints := range p { // an empty provider map is a don't-care
			if hints == nil {
				continue // don't care: neither narrows nor offers a node
			}
			dc, singles, kept := m.singleList(hints)
			if !kept {
				return m.all, false
			}
			union |= singles
			if !dc {
				allDC = false
				inter &= singles
			}
		}
	}
	if c := inter & union; c != 0 {
		best := c & -c // the numerically smallest node
		if m.load != nil {
			for x := c &^ best; x != 0; x &= x - 1 {
				if d := x & -x; m.better(d, best) {
					best = d
				}
			}
		}
		return best, true
	}
	return m.all, allDC
}

// singleList is what the filter keeps of one list: whether it holds a
// preferred don't-care, the machine nodes it offers as preferred single
// nodes, and whether anything is kept (a preferred single foreign node is
// kept but ANDs to nothing).
func (m *merger) singleList(hints []Hint) (dc bool, singles uint64, kept bool) {
	for i := range hints {
		h := &hints[i]
		switch {
		case !h.Preferred:
		case h.Affinity == nil:
			dc, kept = true, true
		case m.low:
			// Two nodes below 64 are no single node, whatever the rest. A
			// node of 64 or more is foreign: kept if it is the only one,
			// but it offers no machine node.
			w := words(h.Affinity)
			switch w0 := w[0]; {
			case w0&(w0-1) != 0:
			case w0 != 0:
				if highWords(w) == 0 {
					singles |= m.denseWord(w0)
					kept = true
				}
			case !kept:
				kept = count(w) == 1
			}
		default:
			if count(words(h.Affinity)) == 1 {
				singles |= m.dense(h.Affinity)
				kept = true
			}
		}
	}
	return dc, singles, kept
}
