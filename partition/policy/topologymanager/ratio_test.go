package topologymanager

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// sizedInput is test/tmcompare's randomInput, draw for draw: with the
// same seed it makes the very inputs that module times kubelet's merge
// on, so the naive baseline's times here and kubelet's there compare
// input for input. n nodes (n of 0..n+1 half the time), up to 4
// providers, up to 3 resources each, up to 5 hints a list, nil and empty
// maps and lists, don't-care and empty affinities, foreign nodes, shared
// lists; at most maxPerms permutations.
func sizedInput(r *rand.Rand, n, maxPerms int, policy string) randomInput {
	for {
		in := randomInput{policy: policy}
		if r.IntN(2) == 0 {
			in.machine = r.Perm(n + 2)[:n]
		} else {
			in.machine = r.Perm(n)
		}
		in.closest = r.IntN(2) == 0
		in.dist = sizedDistances(r, n+2)
		perms := 1
		for p := 1 + r.IntN(4); p > 0; p-- {
			switch r.IntN(20) {
			case 0:
				in.providers = append(in.providers, nil)
				continue
			case 1:
				in.providers = append(in.providers, ProviderHints{})
				continue
			}
			ph := ProviderHints{}
			for k := 1 + r.IntN(3); k > 0; k-- {
				name := string(rune('a' + r.IntN(26)))
				switch r.IntN(10) {
				case 0:
					ph[name] = nil
					continue
				case 1:
					ph[name] = []Hint{}
					continue
				}
				var l []Hint
				for c := 1 + r.IntN(5); c > 0; c-- {
					pref := r.IntN(3) != 0
					switch x := r.IntN(20); {
					case x < 3:
						l = append(l, DontCare(pref))
					case x == 3:
						l = append(l, empty(pref))
					default:
						var ids []int
						for len(ids) == 0 {
							for _, id := range in.machine {
								if r.IntN(3) == 0 {
									ids = append(ids, id)
								}
							}
							if r.IntN(8) == 0 {
								ids = append(ids, r.IntN(n+2))
							}
						}
						l = append(l, NewHint(pref, ids...))
					}
				}
				ph[name] = l
				perms *= len(l)
				if r.IntN(4) == 0 {
					ph[name+"-shared"] = l
					perms *= len(l)
				}
			}
			in.providers = append(in.providers, ph)
		}
		if perms <= maxPerms {
			return in
		}
	}
}

// sizedDistances is test/tmcompare's distances, draw for draw.
func sizedDistances(r *rand.Rand, span int) map[int]map[int]int {
	choices := []int{11, 12, 20, 21, 30}
	d := map[int]map[int]int{}
	for i := 0; i < span; i++ {
		d[i] = map[int]int{i: 10}
	}
	for i := 0; i < span; i++ {
		for j := i + 1; j < span; j++ {
			v := choices[r.IntN(len(choices))]
			d[i][j], d[j][i] = v, v
		}
	}
	return d
}

// timeRun is the mean time of reps calls of run.
func timeRun(run func(), reps int) time.Duration {
	start := time.Now()
	for i := 0; i < reps; i++ {
		run()
	}
	return time.Since(start) / time.Duration(reps)
}

// repsFor is how many calls of run last about span, at least 8, after
// warming run up.
func repsFor(run func(), span time.Duration) int {
	timeRun(run, 8)
	reps := 8
	for timeRun(run, reps)*time.Duration(reps) < span && reps < 1<<20 {
		reps *= 2
	}
	return reps
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

// ratioInputs is BenchmarkRatioNaive's input sets, in its order:
// test/tmcompare BenchmarkRatio's.
func ratioInputs() [][]randomInput {
	r := rand.New(rand.NewPCG(7, 8))
	var sets [][]randomInput
	for _, n := range []int{2, 4, 8, 12, 16} {
		for _, pol := range []string{PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode} {
			set := make([]randomInput, 200)
			for i := range set {
				set[i] = sizedInput(r, n, 4096, pol)
			}
			sets = append(sets, set)
		}
	}
	return sets
}

// ratioFingerprint must be test/tmcompare's (ratio_test.go): both
// benchmarks then time the very same inputs.
const ratioFingerprint = 0x8be80bad81b9200c

// TestRatioInputs fingerprints BenchmarkRatioNaive's inputs.
func TestRatioInputs(t *testing.T) {
	h := fnv.New64a()
	for _, set := range ratioInputs() {
		for _, in := range set {
			fmt.Fprintln(h, in.policy, in.machine, in.closest, in.dist, in.providers)
		}
	}
	if got := h.Sum64(); got != ratioFingerprint {
		t.Fatalf("fingerprint %#x, want %#x", got, uint64(ratioFingerprint))
	}
}

// BenchmarkRatioNaive times every input on its own, the naive baseline
// (kubelet's walk over the Cartesian product, naive_test.go) and the
// merge, on test/tmcompare BenchmarkRatio's inputs, and reports per set
// the median and the smallest (worst) naive/merge ratio, the median times
// and the naive's time per permutation (its sum of times over the set's
// sum of permutations; tmcompare reports kubelet's own as
// kubelet-ns/perm). An input's time is its fastest over b.N rounds. Run:
//
//	go test -run '^$' -bench RatioNaive -benchtime 5x
func BenchmarkRatioNaive(b *testing.B) {
	for _, set := range ratioInputs() {
		pols := make([]Policy, len(set))
		refs := make([]naive, len(set))
		for i, in := range set {
			p, err := New(Options{Policy: in.policy, NUMANodes: in.machine, Distances: in.dist,
				PolicyOptions: PolicyOptions{PreferClosestNUMA: in.closest, MaxAllowableNUMANodes: max(8, len(in.machine))}})
			if err != nil {
				b.Fatal(err)
			}
			pols[i] = p
			refs[i] = naive{policy: in.policy, machine: bitmask.NewNodeSet(in.machine...), preferClosest: in.closest, dist: in.dist}
		}
		b.Run(fmt.Sprintf("random/%02d/%s", len(set[0].machine), set[0].policy), func(b *testing.B) {
			ours, base := timeEach(b, len(set),
				func(i int) { pols[i].Merge(set[i].providers) },
				func(i int) { refs[i].merge(set[i].providers) })
			ratios := make([]float64, len(set))
			oursNs, baseNs := make([]float64, len(set)), make([]float64, len(set))
			var baseSum time.Duration
			totalPerms, worst := 0, 0
			for i, in := range set {
				ratios[i] = float64(base[i]) / float64(max(ours[i], 1))
				oursNs[i], baseNs[i] = float64(ours[i]), float64(base[i])
				baseSum += base[i]
				totalPerms += permsOf(in.providers)
				if ratios[i] < ratios[worst] {
					worst = i
				}
			}
			b.ReportMetric(median(ratios), "median-x")
			b.ReportMetric(ratios[worst], "worst-x")
			b.ReportMetric(median(oursNs), "ours-med-ns")
			b.ReportMetric(median(baseNs), "naive-med-ns")
			b.ReportMetric(float64(baseSum)/float64(totalPerms), "naive-ns/perm")
			b.ReportMetric(0, "ns/op")
			w := set[worst]
			b.Logf("worst: %.1fx, ours %v naive %v, %d permutations, machine %v closest %v, providers %v",
				ratios[worst], ours[worst], base[worst], permsOf(w.providers), w.machine, w.closest, w.providers)
		})
	}
}

// timeEach is every input's fastest time of ours and of base over b.N
// rounds; each round times every input, ours then base, with enough calls
// to last about 20 µs.
func timeEach(b *testing.B, n int, ours, base func(i int)) (oursT, baseT []time.Duration) {
	const span = 20 * time.Microsecond
	oursT, baseT = make([]time.Duration, n), make([]time.Duration, n)
	oursReps, baseReps := make([]int, n), make([]int, n)
	for i := 0; i < n; i++ {
		oursReps[i] = repsFor(func() { ours(i) }, span)
		baseReps[i] = repsFor(func() { base(i) }, span)
	}
	for b.Loop() {
		for i := 0; i < n; i++ {
			o := timeRun(func() { ours(i) }, oursReps[i])
			k := timeRun(func() { base(i) }, baseReps[i])
			if oursT[i] == 0 || o < oursT[i] {
				oursT[i] = o
			}
			if baseT[i] == 0 || k < baseT[i] {
				baseT[i] = k
			}
		}
	}
	return oursT, baseT
}

// permsOf is the size of kubelet's Cartesian product (an empty or nil
// list counts as its one don't-care hint).
func permsOf(providers []ProviderHints) int {
	p := 1
	for _, ph := range providers {
		for _, l := range ph {
			p *= max(1, len(l))
		}
	}
	return p
}
