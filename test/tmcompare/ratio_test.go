package tmcompare

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// timeRun is the mean time of reps calls of run.
func timeRun(run func(), reps int) time.Duration {
	start := time.Now()
	for i := 0; i < reps; i++ {
		run()
	}
	return time.Since(start) / time.Duration(reps)
}

// repsFor is how many calls of run last about span, at least 8. It
// warms run up first: a first call that allocates its buffers or misses
// every cache would otherwise leave a single call to time, cold.
func repsFor(run func(), span time.Duration) int {
	timeRun(run, 8)
	reps := 8
	for {
		if d := timeRun(run, reps) * time.Duration(reps); d >= span || reps >= 1<<20 {
			return reps
		}
		reps *= 2
	}
}

// BenchmarkRatio times every input on its own, kubelet's merge and ours,
// and reports per set the median and the smallest (worst) kubelet/ours
// ratio over its inputs, the median times and kubelet's time per
// permutation (its sum of times over the set's sum of permutations). Each
// b.N iteration times every input once more; an input's time is its
// fastest, which filters out the noise of a shared machine. The inputs
// are the topologymanager package's BenchmarkRatioNaive's (same generator,
// same seed: TestRatioInputs), which times the naive baseline on them.
// Run:
//
//	go test -run '^$' -bench Ratio -benchtime 5x
func BenchmarkRatio(b *testing.B) {
	for _, set := range ratioInputs() {
		pairs := make([]*pair, len(set))
		for i, in := range set {
			p, err := newPair(in)
			if err != nil {
				b.Fatal(err)
			}
			pairs[i] = p
		}
		b.Run(fmt.Sprintf("random/%02d/%s", len(set[0].machine), set[0].policy), func(b *testing.B) {
			ours, kube := timeEach(b, pairs)
			ratios := make([]float64, len(pairs))
			var kubeSum time.Duration
			totalPerms, worst := 0, 0
			for i, p := range pairs {
				kubeSum += kube[i]
				totalPerms += perms(p.in.providers)
				ratios[i] = float64(kube[i]) / float64(max(ours[i], 1))
				if ratios[i] < ratios[worst] {
					worst = i
				}
			}
			b.ReportMetric(median(ratios), "median-x")
			b.ReportMetric(ratios[worst], "worst-x")
			b.ReportMetric(median(durs(ours)), "ours-med-ns")
			b.ReportMetric(median(durs(kube)), "kubelet-med-ns")
			b.ReportMetric(float64(kubeSum)/float64(totalPerms), "kubelet-ns/perm")
			b.ReportMetric(0, "ns/op")
			w := pairs[worst]
			b.Logf("worst: %.1fx, ours %v kubelet %v, %d permutations, machine %v closest %v, providers %v",
				ratios[worst], ours[worst], kube[worst], perms(w.in.providers), w.in.machine, w.in.closest, w.in.providers)
		})
	}
}

// timeEach is every pair's fastest time of ours and of kubelet's over
// b.N rounds; each round times every pair, ours then kubelet's, with
// enough calls to last about 20 µs.
func timeEach(b *testing.B, pairs []*pair) (ours, kube []time.Duration) {
	const span = 20 * time.Microsecond
	ours, kube = make([]time.Duration, len(pairs)), make([]time.Duration, len(pairs))
	oursReps, kubeReps := make([]int, len(pairs)), make([]int, len(pairs))
	for i, p := range pairs {
		oursReps[i] = repsFor(func() { p.runOurs() }, span)
		kubeReps[i] = repsFor(func() { p.runKubelet() }, span)
	}
	for b.Loop() {
		for i, p := range pairs {
			o := timeRun(func() { p.runOurs() }, oursReps[i])
			k := timeRun(func() { p.runKubelet() }, kubeReps[i])
			if ours[i] == 0 || o < ours[i] {
				ours[i] = o
			}
			if kube[i] == 0 || k < kube[i] {
				kube[i] = k
			}
		}
	}
	return ours, kube
}

func durs(d []time.Duration) []float64 {
	out := make([]float64, len(d))
	for i, x := range d {
		out[i] = float64(x)
	}
	return out
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

// ratioInputs is BenchmarkRatio's input sets, in its order.
func ratioInputs() [][]input {
	r := rand.New(rand.NewPCG(7, 8))
	var sets [][]input
	for _, n := range []int{2, 4, 8, 12, 16} {
		for _, pol := range policies {
			set := make([]input, 200)
			for i := range set {
				set[i] = randomInput(r, n, 4096, pol)
			}
			sets = append(sets, set)
		}
	}
	return sets
}

// ratioFingerprint must be the topologymanager package's (ratio_test.go):
// both benchmarks then time the very same inputs.
const ratioFingerprint = 0x8be80bad81b9200c

// TestRatioInputs fingerprints BenchmarkRatio's inputs.
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
