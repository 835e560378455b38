package topologymanager

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// shuffled returns the same merge problem with the providers, the
// resources (map insertion order) and every hint list permuted. A list
// shared by two resources stays shared, as the memory manager shares it.
func shuffled(r *rand.Rand, providers []ProviderHints) []ProviderHints {
	out := slices.Clone(providers)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	done := map[*Hint][]Hint{}
	for i, p := range out {
		if p == nil {
			continue
		}
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		r.Shuffle(len(keys), func(a, b int) { keys[a], keys[b] = keys[b], keys[a] })
		q := make(ProviderHints, len(p))
		for _, k := range keys {
			l := p[k]
			if len(l) == 0 {
				q[k] = l
				continue
			}
			if s, ok := done[&l[0]]; ok {
				q[k] = s
				continue
			}
			s := slices.Clone(l)
			r.Shuffle(len(s), func(a, b int) { s[a], s[b] = s[b], s[a] })
			done[&l[0]] = s
			q[k] = s
		}
		out[i] = q
	}
	return out
}

// randomMasks is a list of k hints on random subsets of the machine, each
// node in with probability 1/2; preferred with probability 1/3.
func randomMasks(r *rand.Rand, machine []int, k int) []Hint {
	l := make([]Hint, 0, k)
	for len(l) < k {
		var ids []int
		for _, id := range machine {
			if r.IntN(2) == 0 {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			l = append(l, NewHint(r.IntN(3) == 0, ids...))
		}
	}
	return l
}

// longInput: many nodes and long lists. Up to exactNodes, about 3/4 of
// all 2^n-1 masks (shared with a hugepage size up to 12 nodes); above it
// three lists of 60 masks, whose up to 216,000 partial ANDs pass
// maxIntermediateMasks, so the bounded search is exercised.
func longInput(r *rand.Rand, n int) []ProviderHints {
	machine := make([]int, n)
	for i := range machine {
		machine[i] = i
	}
	if n <= exactNodes {
		var all []Hint
		for m := 1; m < 1<<n; m++ {
			if r.IntN(4) != 0 {
				all = append(all, NewHint(popcount(m) <= 2, idsOf(m)...))
			}
		}
		mem := ProviderHints{"memory": all}
		if n <= 12 {
			mem["hugepages-2Mi"] = all
		}
		return []ProviderHints{mem, {"cpu": randomMasks(r, machine, 3)}}
	}
	return []ProviderHints{{"memory": randomMasks(r, machine, 60), "gpu": randomMasks(r, machine, 60)}, {"cpu": randomMasks(r, machine, 60)}}
}

// TestMergeOrderIndependent is the determinism guarantee: permuting the
// providers, the resources and the hints of every list never changes the
// merged hint or the admit decision, for every policy, at 1-8 nodes
// (random inputs), 1-16 nodes anywhere in 0..1023 (wide inputs), 9-16
// nodes (long lists, exact search) and beyond (bounded search).
func TestMergeOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 16))
	seeds, longSeeds, shuffles := 1000, 3, 6
	if testing.Short() {
		seeds, longSeeds = 100, 1
	}
	check := func(what string, pol Policy, providers []ProviderHints) {
		want, wa := pol.Merge(providers)
		for s := 0; s < shuffles; s++ {
			if got, ga := pol.Merge(shuffled(r, providers)); !got.Equal(want) || ga != wa {
				t.Fatalf("%s, shuffle %d: %v %v, unshuffled %v %v", what, s, got, ga, want, wa)
			}
		}
	}
	for i := 0; i < seeds; i++ {
		in := genInput(r, 1<<12)
		pol, err := New(Options{Policy: in.policy, NUMANodes: in.machine, Distances: in.dist, PolicyOptions: PolicyOptions{PreferClosestNUMA: in.closest}})
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("random input %d", i), pol, in.providers)
	}
	for i := 0; i < seeds/4; i++ {
		in := wideInput(r, 1+r.IntN(16), 1<<12)
		pol, err := New(Options{Policy: in.policy, NUMANodes: in.machine, Distances: in.dist, PolicyOptions: PolicyOptions{PreferClosestNUMA: in.closest, MaxAllowableNUMANodes: 16}})
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("wide input %d", i), pol, in.providers)
	}
	long := []int{9, 12, 16, 24, 40, 64}
	for i := 0; i < longSeeds; i++ {
		for _, n := range long {
			for _, name := range []string{PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode} {
				pol, err := New(Options{Policy: name, NUMANodes: nodes(n), PolicyOptions: PolicyOptions{MaxAllowableNUMANodes: n}})
				if err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("%s, %d nodes, long lists #%d", name, n, i), pol, longInput(r, n))
			}
		}
	}
}

// TestLongInputReachesBound guards the test above: beyond exactNodes its
// inputs do exceed maxIntermediateMasks partial ANDs.
func TestLongInputReachesBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	m, err := newMerger(Options{Policy: PolicyBestEffort, NUMANodes: nodes(24)})
	if err != nil {
		t.Fatal(err)
	}
	in := longInput(r, 24)
	var l lists
	m.compile(in, &l)
	partial := map[uint64]bool{m.all: true}
	for i := range l.refs {
		next := map[uint64]bool{}
		for s := range partial {
			for _, h := range l.list(i) {
				if x := s & h.dense; x != 0 {
					next[x] = true
				}
			}
		}
		partial = next
	}
	if len(partial) <= maxIntermediateMasks {
		t.Fatalf("%d partial ANDs: the bound is not exercised", len(partial))
	}
}
