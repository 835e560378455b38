package topologymanager

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// corpus8 is a fixed set of random merge problems on exactly 8 nodes.
func corpus8() []randomInput {
	r := rand.New(rand.NewPCG(8, 8))
	var out []randomInput
	for len(out) < 200 {
		in := genInput(r, 1<<14)
		if len(in.machine) != 8 || in.policy == PolicyNone {
			continue
		}
		out = append(out, in)
	}
	return out
}

// BenchmarkMerge8Nodes: the closed-form merge on the corpus (one op = the
// whole corpus). Compare with BenchmarkMergeNaive8Nodes, kubelet's algorithm.
func BenchmarkMerge8Nodes(b *testing.B) {
	corpus := corpus8()
	pols := make([]Policy, len(corpus))
	for i, in := range corpus {
		p, err := New(Options{Policy: in.policy, NUMANodes: in.machine, Distances: in.dist, PolicyOptions: PolicyOptions{PreferClosestNUMA: in.closest}})
		if err != nil {
			b.Fatal(err)
		}
		pols[i] = p
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, in := range corpus {
			pols[j].Merge(in.providers)
		}
	}
}

func BenchmarkMergeNaive8Nodes(b *testing.B) {
	corpus := corpus8()
	refs := make([]naive, len(corpus))
	for i, in := range corpus {
		refs[i] = naive{policy: in.policy, machine: bitmask.NewNodeSet(in.machine...), preferClosest: in.closest, dist: in.dist}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, in := range corpus {
			refs[j].merge(in.providers)
		}
	}
}

// TestCorpusIdentical guards the benchmark: both algorithms agree on it.
func TestCorpusIdentical(t *testing.T) {
	for i, in := range corpus8() {
		p, _ := New(Options{Policy: in.policy, NUMANodes: in.machine, Distances: in.dist, PolicyOptions: PolicyOptions{PreferClosestNUMA: in.closest}})
		got, ga := p.Merge(in.providers)
		want, wa := naive{policy: in.policy, machine: bitmask.NewNodeSet(in.machine...), preferClosest: in.closest, dist: in.dist}.merge(in.providers)
		if !got.Equal(want) || ga != wa {
			t.Fatalf("corpus %d: %v %v vs %v %v", i, got, ga, want, wa)
		}
	}
}

// shaped is what kubelet really merges at 8 nodes: the memory manager's
// identical lists for memory and hugepages (all 255 masks that fit, the
// single nodes preferred) and a CPU manager list.
func shaped() []ProviderHints {
	var mem []Hint
	for mask := 1; mask < 256; mask++ {
		var ids []int
		for i := 0; i < 8; i++ {
			if mask&(1<<i) != 0 {
				ids = append(ids, i)
			}
		}
		mem = append(mem, NewHint(len(ids) == 1 && ids[0] >= 4, ids...))
	}
	cpu := []Hint{NewHint(true, 2, 3), NewHint(false, 0, 1, 2, 3), NewHint(false, 4, 5, 6, 7)}
	return []ProviderHints{{"memory": mem, "hugepages-1Gi": mem}, {"cpu": cpu}}
}

func BenchmarkMergeShaped8Nodes(b *testing.B) {
	p, _ := New(Options{Policy: PolicyBestEffort, NUMANodes: nodes(8)})
	in := shaped()
	for i := 0; i < b.N; i++ {
		p.Merge(in)
	}
}

func BenchmarkMergeShapedNaive8Nodes(b *testing.B) {
	ref := naive{policy: PolicyBestEffort, machine: bitmask.NewNodeSet(nodes(8)...)}
	in := shaped()
	for i := 0; i < b.N; i++ {
		ref.merge(in)
	}
}

func TestShapedIdentical(t *testing.T) {
	for _, pol := range []string{PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode} {
		p, _ := New(Options{Policy: pol, NUMANodes: nodes(8)})
		got, ga := p.Merge(shaped())
		want, wa := naive{policy: pol, machine: bitmask.NewNodeSet(nodes(8)...)}.merge(shaped())
		if !got.Equal(want) || ga != wa {
			t.Fatalf("%s: %v %v vs %v %v", pol, got, ga, want, wa)
		}
	}
}

// allMasks is the long-list case: one provider lists all 2^n-1
// node sets (single nodes preferred), another one CPU hint.
func allMasks(n int) []ProviderHints {
	var l []Hint
	for mask := 1; mask < 1<<n; mask++ {
		l = append(l, NewHint(popcount(mask) == 1, idsOf(mask)...))
	}
	return []ProviderHints{{"memory": l}, {"cpu": {NewHint(true, 0, 1)}}}
}

// BenchmarkMergeAllMasks: duplicate removal and the partial ANDs must stay
// linear in the list length (they were quadratic: 0.7 s at 16 nodes).
func BenchmarkMergeAllMasks(b *testing.B) {
	for _, n := range []int{10, 12, 14, 16} {
		for _, pol := range []string{PolicyBestEffort, PolicySingleNUMANode} {
			b.Run(fmt.Sprintf("%dnodes/%s", n, pol), func(b *testing.B) {
				p, err := New(Options{Policy: pol, NUMANodes: nodes(n), PolicyOptions: PolicyOptions{MaxAllowableNUMANodes: n}})
				if err != nil {
					b.Fatal(err)
				}
				in := allMasks(n)
				for b.Loop() {
					p.Merge(in)
				}
			})
		}
	}
}
