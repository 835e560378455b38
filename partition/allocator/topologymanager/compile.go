package topologymanager

import (
	"math/bits"
	"slices"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// chint is a hint compiled for the merge. It holds no pointer, so that
// long lists are cheap to allocate and invisible to the garbage collector.
type chint struct {
	dense uint64 // machine ∧ raw in dense form; the machine for don't care
	count int32  // popcount of the raw mask, foreign nodes included
	// foreign is 1 + the index in lists.foreign of the raw mask when it
	// names nodes outside the machine (then only the raw mask itself
	// identifies it), else 0.
	foreign int32
	isNil   bool // don't care
	pref    bool
}

// compileHint compiles a non-nil affinity; foreign is only flagged (1).
func (m *merger) compileHint(h *Hint) chint {
	c := chint{pref: h.Preferred, count: int32(h.Affinity.Len()), dense: m.dense(h.Affinity)}
	if int(c.count) != bits.OnesCount64(c.dense) {
		c.foreign = 1
	}
	return c
}

// cmpRaw orders non-nil raw masks; 0 means the very same raw mask, which is
// what kubelet's mergePermutation compares for preference. Two masks equal
// on the machine differ only if one of them names foreign nodes.
func (l *lists) cmpRaw(a, b *chint) int {
	switch {
	case a.dense != b.dense:
		if a.dense < b.dense {
			return -1
		}
		return 1
	case (a.foreign == 0) != (b.foreign == 0):
		if b.foreign != 0 {
			return -1
		}
		return 1
	case a.foreign == 0:
		return 0
	}
	ra, rb := l.foreign[a.foreign-1], l.foreign[b.foreign-1]
	switch {
	case *ra == *rb:
		return 0
	case ra.Less(*rb):
		return -1
	}
	return 1
}

// lists is the flattened hint lists (semantics 5.1.1), compiled. The
// caller provides the backing arrays, so a merge of a few short lists does
// not allocate (a struct holding its own buffers would move to the heap).
type lists struct {
	hs      []chint
	refs    []listRef
	foreign []*bitmask.NodeSet
}

// listRef is list i: hs[start:end]. A list that is the very slice of an
// earlier one (the memory manager gives every resource one shared list) is
// not compiled again: it refers to the earlier range and is marked same,
// which the preferred search skips (a second copy changes nothing there).
type listRef struct {
	start, end int
	same       bool
	src        *Hint // the provider's first hint, to recognise a shared slice
}

func (l *lists) list(i int) []chint { return l.hs[l.refs[i].start:l.refs[i].end] }

// compile flattens the providers' answers as kubelet's
// filterProvidersHints does: a nil or empty provider map and a nil list
// become [{nil, preferred}], a non-nil empty list [{nil, not preferred}].
// It appends to and returns l's slices rather than assigning through l,
// which would move the caller's stack buffers to the heap.
func (m *merger) compile(providers []ProviderHints, l lists) lists {
	hs, refs, foreign := l.hs, l.refs, l.foreign
	for _, p := range providers {
		if len(p) == 0 {
			hs = append(hs, chint{dense: m.all, isNil: true, pref: true})
			refs = append(refs, listRef{start: len(hs) - 1, end: len(hs)})
			continue
		}
		for _, hints := range p {
			if len(hints) == 0 { // nil: don't care; empty: no possible affinity
				hs = append(hs, chint{dense: m.all, isNil: true, pref: hints == nil})
				refs = append(refs, listRef{start: len(hs) - 1, end: len(hs)})
				continue
			}
			if i := sameAs(refs, hints); i >= 0 {
				r := refs[i]
				r.same = true
				refs = append(refs, r)
				continue
			}
			start := len(hs)
			// At least doubling: append's growth for long slices is 1.25×,
			// which copied a 2^16-hint list some forty times.
			if start+len(hints) > cap(hs) {
				hs = slices.Grow(hs, max(len(hints), cap(hs)))
			}
			hs = hs[:start+len(hints)]
			for j := range hints {
				h := &hints[j]
				if h.Affinity == nil {
					hs[start+j] = chint{dense: m.all, isNil: true, pref: h.Preferred}
					continue
				}
				c := m.compileHint(h)
				if c.foreign != 0 {
					foreign = append(foreign, h.Affinity)
					c.foreign = int32(len(foreign))
				}
				hs[start+j] = c
			}
			refs = append(refs, listRef{start: start, end: len(hs), src: &hints[0]})
		}
	}
	return lists{hs: hs, refs: refs, foreign: foreign}
}

// sameAs is the earlier list that is the very slice hints, or -1.
func sameAs(refs []listRef, hints []Hint) int {
	for i, r := range refs {
		if r.src == &hints[0] && r.end-r.start == len(hints) {
			return i
		}
	}
	return -1
}
