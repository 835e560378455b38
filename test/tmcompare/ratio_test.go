package tmcompare

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	tm "github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// timeRun is the mean time of reps calls of run, in ns: a float, since
// a merge of policy none takes 2 ns and whole nanoseconds made its
// ratios 2/3 or 3/2.
func timeRun(run func(), reps int) float64 {
	start := time.Now()
	for i := 0; i < reps; i++ {
		run()
	}
	return float64(time.Since(start)) / float64(reps)
}

// repsFor is how many calls of run last about span, at least 8. It
// warms run up first: a first call that allocates its buffers or misses
// every cache would otherwise leave a single call to time, cold.
func repsFor(run func(), span time.Duration) int {
	timeRun(run, 8)
	reps := 8
	for {
		if d := timeRun(run, reps) * float64(reps); d >= float64(span) || reps >= 1<<20 {
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
// The none sets are the best-effort sets' inputs under policy none
// (kubelet's and ours return a constant without looking at the hints),
// above8/any is BenchmarkRatio's check above 8 nodes: 1,000 random
// inputs at 9-16 nodes, every policy but none, reporting how many are
// slower than kubelet's (slower-count); and random/62 are 100 inputs a
// policy at 62 nodes (wideInputs). Run:
//
//	go test -run '^$' -bench Ratio -benchtime 5x
func BenchmarkRatio(b *testing.B) {
	for _, set := range ratioInputs() {
		ratioSet(b, fmt.Sprintf("random/%02d/%s", len(set[0].machine), set[0].policy), set)
		if set[0].policy == tm.PolicyBestEffort && len(set[0].machine) <= 8 {
			none := slices.Clone(set)
			for i := range none {
				none[i].policy = tm.PolicyNone
			}
			ratioSet(b, fmt.Sprintf("random/%02d/%s", len(set[0].machine), tm.PolicyNone), none)
		}
	}
	ratioSet(b, "above8/any", above8Inputs())
	for _, pol := range policies {
		ratioSet(b, "random/62/"+pol, wideInputs(pol))
	}
}

// wideInputs is 100 random inputs at 62 nodes, the widest machine the
// generator draws that kubelet's 64-bit masks hold (its ids and foreign
// ids go up to n+1 = 63): the decision time a user of a 64-node host
// pays, against kubelet's.
func wideInputs(policy string) []input {
	r := rand.New(rand.NewPCG(62, uint64(len(policy))))
	set := make([]input, 100)
	for i := range set {
		set[i] = randomInput(r, 62, 4096, policy)
	}
	return set
}

// above8Inputs is 1,000 random inputs at 9 to 16 nodes, the policies in
// turn (none left out), at most 4,096 permutations.
func above8Inputs() []input {
	r := rand.New(rand.NewPCG(9, 16))
	set := make([]input, 1000)
	for i := range set {
		set[i] = randomInput(r, 9+r.IntN(8), 4096, policies[i%len(policies)])
	}
	return set
}

// ratioSet times the inputs of one set and reports its figures.
func ratioSet(b *testing.B, name string, set []input) {
	pairs := make([]*pair, len(set))
	for i, in := range set {
		p, err := newPair(in)
		if err != nil {
			b.Fatal(err)
		}
		pairs[i] = p
	}
	b.Run(name, func(b *testing.B) {
		ours, kube := timeEach(b, pairs)
		ratios := make([]float64, len(pairs))
		kubeSum := 0.0
		totalPerms, worst, slower := 0, 0, 0
		for i, p := range pairs {
			kubeSum += kube[i]
			totalPerms += perms(p.in.providers)
			ratios[i] = kube[i] / max(ours[i], 0.001)
			if ratios[i] < ratios[worst] {
				worst = i
			}
			if ours[i] > kube[i] {
				slower++
			}
		}
		b.ReportMetric(median(ratios), "median-x")
		b.ReportMetric(ratios[worst], "worst-x")
		b.ReportMetric(float64(slower), "slower-count")
		b.ReportMetric(median(ours), "ours-med-ns")
		b.ReportMetric(median(kube), "kubelet-med-ns")
		b.ReportMetric(kubeSum/float64(totalPerms), "kubelet-ns/perm")
		b.ReportMetric(0, "ns/op")
		w := pairs[worst]
		b.Logf("worst: %.1fx, ours %.1fns kubelet %.1fns, %d permutations, policy %s, machine %v closest %v, providers %v",
			ratios[worst], ours[worst], kube[worst], perms(w.in.providers), w.in.policy, w.in.machine, w.in.closest, w.in.providers)
	})
}

// timeEach is every pair's fastest time of ours and of kubelet's over
// b.N rounds, in ns; each round times every pair, ours then kubelet's,
// with enough calls to last about 20 µs.
func timeEach(b *testing.B, pairs []*pair) (ours, kube []float64) {
	const span = 20 * time.Microsecond
	ours, kube = make([]float64, len(pairs)), make([]float64, len(pairs))
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
