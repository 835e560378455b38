package topologymanager

import (
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// naive is the reference: kubelet 1.37's algorithm written out literally
// (filterProvidersHints, the Cartesian product of the lists,
// mergePermutation, the sequential HintMerger.compare). It is kept as the
// oracle for the fast merge and as the benchmark baseline. As a baseline
// it is no slower than what it stands for: on test/tmcompare's inputs
// (BenchmarkRatioNaive) it takes 130–145 ns a permutation where kubelet's
// own code takes 125–200, and its median times are at or below kubelet's.
type naive struct {
	policy        string
	machine       bitmask.NodeSet
	preferClosest bool
	dist          map[int]map[int]int
}

func (n naive) flatten(providers []ProviderHints) [][]Hint {
	var out [][]Hint
	for _, p := range providers {
		if len(p) == 0 {
			out = append(out, []Hint{{Preferred: true}})
			continue
		}
		for _, l := range p {
			if l == nil {
				out = append(out, []Hint{{Preferred: true}})
			} else if len(l) == 0 {
				out = append(out, []Hint{{Preferred: false}})
			} else {
				out = append(out, l)
			}
		}
	}
	if n.policy == PolicySingleNUMANode {
		for i, l := range out {
			var kept []Hint
			for _, h := range l {
				if h.Preferred && (h.Affinity == nil || h.Affinity.Len() == 1) {
					kept = append(kept, h)
				}
			}
			out[i] = kept
		}
	}
	return out
}

func isNarrower(a, b bitmask.NodeSet) bool {
	if a.Len() != b.Len() {
		return a.Len() < b.Len()
	}
	return a.Less(b)
}

func (n naive) avg(m bitmask.NodeSet) float64 {
	sum, count := 0, 0
	for _, i := range m.IDs() {
		for _, j := range m.IDs() {
			sum += n.dist[i][j]
			count++
		}
	}
	return float64(sum) / float64(count)
}

func (n naive) compareMasks(cur, cand Hint) Hint {
	a, b := *cur.Affinity, *cand.Affinity
	if a == b {
		return cur
	}
	var best bitmask.NodeSet
	if n.preferClosest && n.policy != PolicySingleNUMANode && a.Len() == b.Len() {
		da, db := n.avg(a), n.avg(b)
		switch {
		case da == db:
			best = b
			if a.Less(b) {
				best = a
			}
		case da < db:
			best = a
		default:
			best = b
		}
	} else {
		best = b
		if isNarrower(a, b) {
			best = a
		}
	}
	if best == a {
		return cur
	}
	return cand
}

func (n naive) compare(cur *Hint, cand Hint, bestCount int) *Hint {
	if cand.Affinity.Len() == 0 {
		return cur
	}
	if cur == nil {
		return &cand
	}
	if !cur.Preferred && cand.Preferred {
		return &cand
	}
	if cur.Preferred && !cand.Preferred {
		return cur
	}
	if cur.Preferred && cand.Preferred {
		r := n.compareMasks(*cur, cand)
		return &r
	}
	cc, kc := cur.Affinity.Len(), cand.Affinity.Len()
	switch {
	case cc > bestCount:
		r := n.compareMasks(*cur, cand)
		return &r
	case cc == bestCount:
		if kc != bestCount {
			return cur
		}
		r := n.compareMasks(*cur, cand)
		return &r
	case kc > bestCount:
		return cur
	case kc == bestCount:
		return &cand
	case kc > cc:
		return &cand
	case kc < cc:
		return cur
	}
	r := n.compareMasks(*cur, cand)
	return &r
}

func (n naive) merge(providers []ProviderHints) (Hint, bool) {
	if n.policy == PolicyNone {
		return Hint{}, true
	}
	lists := n.flatten(providers)
	bestCount := 0
	for _, l := range lists {
		var narrowest *bitmask.NodeSet
		for _, h := range l {
			if h.Affinity != nil && (narrowest == nil || isNarrower(*h.Affinity, *narrowest)) {
				narrowest = h.Affinity
			}
		}
		if narrowest != nil && narrowest.Len() > bestCount {
			bestCount = narrowest.Len()
		}
	}
	var best *Hint
	perm := make([]Hint, len(lists))
	var walk func(i int)
	walk = func(i int) {
		if i == len(lists) {
			merged := n.machine
			preferred := true
			var first *bitmask.NodeSet
			for _, h := range perm {
				if h.Affinity != nil {
					if first == nil {
						first = h.Affinity
					} else if *h.Affinity != *first {
						preferred = false
					}
					merged = merged.Intersect(*h.Affinity)
				}
				if !h.Preferred {
					preferred = false
				}
			}
			best = n.compare(best, Hint{Affinity: &merged, Preferred: preferred}, bestCount)
			return
		}
		for _, h := range lists[i] {
			perm[i] = h
			walk(i + 1)
		}
	}
	walk(0)
	if best == nil {
		m := n.machine
		best = &Hint{Affinity: &m}
	}
	res := *best
	if n.policy == PolicySingleNUMANode && *res.Affinity == n.machine {
		res.Affinity = nil
	}
	if n.policy == PolicyBestEffort {
		return res, true
	}
	return res, res.Preferred
}
