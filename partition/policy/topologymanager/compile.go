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
	// foreign is 1 + the index in lists.foreign of the raw mask when it
	// names nodes outside the machine (then only the raw mask itself
	// identifies it), else 0.
	foreign int32
	count   int16 // popcount of the raw mask, foreign nodes included
	isNil   bool  // don't care
	pref    bool
}

// nodeWords is the number of 64-bit words of a bitmask.NodeSet.
const nodeWords = bitmask.NodeWords

// words is a node set's words, read and written in place
// (NodeSet.Words): NodeSet's methods take the set by value, and the
// compiler copies its 128 bytes at every call, inlined or not (sixteen
// Word calls copy it sixteen times): that was most of the time of a merge
// of short lists.
func words(a *bitmask.NodeSet) *[nodeWords]uint64 { return a.Words() }

// highWords is the OR of a node set's words beyond the first (nodes
// 64..1023): zero for every set of small node ids.
func highWords(w *[nodeWords]uint64) uint64 {
	return w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7] | w[8] |
		w[9] | w[10] | w[11] | w[12] | w[13] | w[14] | w[15]
}

// count is a node set's size.
func count(w *[nodeWords]uint64) int {
	c := 0
	for _, x := range w {
		c += bits.OnesCount64(x)
	}
	return c
}

// compileHint compiles a non-nil affinity into c; foreign is only flagged
// (1). It writes c's fields one by one: a chint returned by value was
// stored field by field and loaded whole, which stalls the CPU.
func (m *merger) compileHint(c *chint, a *bitmask.NodeSet, pref bool) {
	w := words(a)
	c.pref, c.isNil, c.foreign = pref, false, 0
	if m.low {
		w0 := w[0]
		c.dense, c.count = m.denseWord(w0), int16(bits.OnesCount64(w0))
		if hi := highWords(w); hi != 0 || w0&^m.machineW0 != 0 {
			c.foreign = 1
			if hi != 0 {
				c.count = int16(count(w))
			}
		}
		return
	}
	c.dense, c.count = m.dense(a), int16(count(w))
	if int(c.count) != bits.OnesCount64(c.dense) {
		c.foreign = 1
	}
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

// lists is the flattened hint lists (semantics 5.1.1), compiled, in the
// buffers of the merger's scratch.
type lists struct {
	hs      []chint
	refs    []listRef
	foreign []*bitmask.NodeSet
	sc      *scratch // the other buffers of the merge
}

// listRef is list i: hs[start:end], and what the merge needs to know of
// it, gathered while compiling. A list that is the very slice of an
// earlier one (the memory manager gives every resource one shared list)
// is not compiled again: it refers to the earlier range and is marked
// same, which the preferred search skips (a second copy changes nothing
// there).
type listRef struct {
	src        *Hint // the provider's first hint, to recognise a shared slice
	start, end int32
	prefs      int32 // preferred hints with an affinity
	narrowest  int16 // the smallest raw count of a hint with an affinity, -1 for none
	prefNil    bool  // holds a preferred don't care
	same       bool
}

func (l *lists) list(i int) []chint { return l.hs[l.refs[i].start:l.refs[i].end] }

// compile flattens the providers' answers as kubelet's
// filterProvidersHints does: a nil or empty provider map and a nil list
// become [{nil, preferred}], a non-nil empty list [{nil, not preferred}].
// It appends to l's slices.
func (m *merger) compile(providers []ProviderHints, l *lists) {
	hs, refs, foreign := l.hs, l.refs, l.foreign
	for _, p := range providers {
		if len(p) == 0 {
			hs = append(hs, chint{dense: m.all, isNil: true, pref: true})
			refs = append(refs, listRef{start: int32(len(hs) - 1), end: int32(len(hs)), narrowest: -1, prefNil: true})
			continue
		}
		for _, hints := range p {
			if len(hints) == 0 { // nil: don't care; empty: no possible affinity
				hs = append(hs, chint{dense: m.all, isNil: true, pref: hints == nil})
				refs = append(refs, listRef{start: int32(len(hs) - 1), end: int32(len(hs)), narrowest: -1, prefNil: hints == nil})
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
			// The list's facts in scalars, not in a listRef: a struct
			// updated field by field and then copied whole stalls the CPU.
			prefs, narrowest, prefNil := int32(0), int16(-1), false
			for j := range hints {
				h := &hints[j]
				if h.Affinity == nil {
					hs[start+j] = chint{dense: m.all, isNil: true, pref: h.Preferred}
					prefNil = prefNil || h.Preferred
					continue
				}
				c := &hs[start+j]
				m.compileHint(c, h.Affinity, h.Preferred)
				if c.foreign != 0 {
					foreign = append(foreign, h.Affinity)
					c.foreign = int32(len(foreign))
				}
				if c.pref {
					prefs++
				}
				if narrowest < 0 || c.count < narrowest {
					narrowest = c.count
				}
			}
			refs = append(refs, listRef{src: &hints[0], start: int32(start), end: int32(len(hs)),
				prefs: prefs, narrowest: narrowest, prefNil: prefNil})
		}
	}
	l.hs, l.refs, l.foreign = hs, refs, foreign
}

// sameAs is the earlier list that is the very slice hints, or -1.
func sameAs(refs []listRef, hints []Hint) int {
	for i := range refs {
		if r := &refs[i]; r.src == &hints[0] && int(r.end-r.start) == len(hints) {
			return i
		}
	}
	return -1
}
