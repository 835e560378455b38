package tmcompare

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMerge times kubelet's merge and ours on the same inputs: one
// op merges every input of the set once (300 random or memory-manager-
// shaped inputs per node count and policy, or the one all-masks input),
// so kubelet's ns/op over ours is the set's speed-up. Run:
//
//	go test -run '^$' -bench . -benchtime 200x
func BenchmarkMerge(b *testing.B) {
	const count = 300
	r := rand.New(rand.NewPCG(7, 7))
	type set struct {
		name string
		ins  []input
	}
	var sets []set
	for n := 2; n <= 16; n++ {
		if n > 8 && n%2 == 1 {
			continue
		}
		for _, pol := range policies {
			var rnd, shp []input
			for i := 0; i < count; i++ {
				rnd = append(rnd, randomInput(r, n, 4096, pol))
				if n <= 12 {
					shp = append(shp, shapedInput(r, n, 1<<14, pol))
				}
			}
			sets = append(sets, set{fmt.Sprintf("random/%02d/%s", n, pol), rnd})
			if shp != nil {
				sets = append(sets, set{fmt.Sprintf("shaped/%02d/%s", n, pol), shp})
			}
		}
	}
	for _, n := range []int{10, 12, 14, 16} {
		for _, pol := range policies {
			sets = append(sets, set{fmt.Sprintf("allmasks/%02d/%s", n, pol), []input{allMasksInput(n, pol)}})
		}
	}
	for _, s := range sets {
		pairs := make([]*pair, len(s.ins))
		for i, in := range s.ins {
			p, err := newPair(in)
			if err != nil {
				b.Fatal(err)
			}
			pairs[i] = p
		}
		b.Run(s.name+"/ours", func(b *testing.B) {
			for b.Loop() {
				for _, p := range pairs {
					p.runOurs()
				}
			}
		})
		b.Run(s.name+"/kubelet", func(b *testing.B) {
			for b.Loop() {
				for _, p := range pairs {
					p.runKubelet()
				}
			}
		})
	}
}
