package topologymanager

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// TestWordsView: words reads a NodeSet's words in place, in Word's order,
// and sparse writes them so: the merge depends on NodeSet's layout.
func TestWordsView(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 200; i++ {
		var ids []int
		for k := r.IntN(6); k >= 0; k-- {
			ids = append(ids, r.IntN(bitmask.MaxNodes))
		}
		s := bitmask.NewNodeSet(ids...)
		w := words(&s)
		for j := 0; j < nodeWords; j++ {
			if w[j] != s.Word(j) {
				t.Fatalf("%v: word %d is %#x in place, %#x by Word", ids, j, w[j], s.Word(j))
			}
		}
		if count(w) != s.Len() {
			t.Fatalf("%v: count %d, Len %d", ids, count(w), s.Len())
		}
	}
	for _, machine := range [][]int{{0, 1, 2}, {3, 4, 5, 6}, {1, 5, 70, 1000}, {63, 64}} {
		m, err := newMerger(Options{Policy: PolicyBestEffort, NUMANodes: machine})
		if err != nil {
			t.Fatal(err)
		}
		for d := uint64(0); d <= m.all; d++ {
			var want bitmask.NodeSet
			for i, id := range machine {
				if d&(1<<i) != 0 {
					want = want.Add(id)
				}
			}
			if got := m.sparse(d); got != want {
				t.Fatalf("machine %v, mask %b: sparse %v, want %v", machine, d, got, want)
			}
			if got := m.dense(&want); got != d {
				t.Fatalf("machine %v, set %v: dense %b, want %b", machine, want, got, d)
			}
		}
	}
}

// TestConcurrentMerges: merges running at once on one policy share its
// scratch buffers, dedupe bitmap and result cache; each must get the
// answer it gets alone (run with -race).
func TestConcurrentMerges(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{2, 8, 12, 16, 24} {
		for _, name := range []string{PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode} {
			pol, err := New(Options{Policy: name, NUMANodes: nodes(n), PolicyOptions: PolicyOptions{MaxAllowableNUMANodes: max(8, n)}})
			if err != nil {
				t.Fatal(err)
			}
			var ins [][]ProviderHints
			for i := 0; i < 40; i++ {
				if i%8 == 0 {
					ins = append(ins, longInput(r, n))
					continue
				}
				ins = append(ins, randomProviders(r, nodes(n)))
			}
			want := make([]Hint, len(ins))
			for i, in := range ins {
				want[i], _ = pol.Merge(in)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for rep := 0; rep < 3; rep++ {
						for i, in := range ins {
							if got, _ := pol.Merge(in); !got.Equal(want[i]) {
								errs <- fmt.Errorf("%s, %d nodes, input %d: %v concurrently, %v alone", name, n, i, got, want[i])
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		}
	}
}

// randomProviders is up to 4 providers of up to 3 lists of up to 5 hints
// on the machine's nodes, don't-cares and empty lists included.
func randomProviders(r *rand.Rand, machine []int) []ProviderHints {
	var out []ProviderHints
	for p := 1 + r.IntN(4); p > 0; p-- {
		ph := ProviderHints{}
		for k := 1 + r.IntN(3); k > 0; k-- {
			name := fmt.Sprint("r", r.IntN(10))
			if r.IntN(10) == 0 {
				ph[name] = []Hint{}
				continue
			}
			l := randomMasks(r, machine, 1+r.IntN(5))
			if r.IntN(5) == 0 {
				l = append(l, DontCare(r.IntN(2) == 0))
			}
			ph[name] = l
		}
		out = append(out, ph)
	}
	return out
}
