package tmcompare

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// timeRun is the time of one call of run, from the fastest of rounds
// timings of enough calls to last at least minSpan.
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
// ratio over its inputs, and the median times. Each b.N iteration times
// every input once more; an input's time is its fastest, which filters
// out the noise of a shared machine. Run:
//
//	go test -run '^$' -bench Ratio -benchtime 5x
func BenchmarkRatio(b *testing.B) {
	const count = 200
	const span = 20 * time.Microsecond
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{2, 4, 8, 12, 16} {
		for _, pol := range policies {
			pairs := make([]*pair, count)
			for i := range pairs {
				p, err := newPair(randomInput(r, n, 4096, pol))
				if err != nil {
					b.Fatal(err)
				}
				pairs[i] = p
			}
			b.Run(fmt.Sprintf("random/%02d/%s", n, pol), func(b *testing.B) {
				ours := make([]time.Duration, count)
				kube := make([]time.Duration, count)
				oursReps := make([]int, count)
				kubeReps := make([]int, count)
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
				ratios := make([]float64, count)
				worst := 0
				for i := range pairs {
					ratios[i] = float64(kube[i]) / float64(max(ours[i], 1))
					if ratios[i] < ratios[worst] {
						worst = i
					}
				}
				b.ReportMetric(median(ratios), "median-x")
				b.ReportMetric(ratios[worst], "worst-x")
				b.ReportMetric(median(durs(ours)), "ours-med-ns")
				b.ReportMetric(median(durs(kube)), "kubelet-med-ns")
				b.ReportMetric(0, "ns/op")
				w := pairs[worst]
				b.Logf("worst: %.1fx, ours %v kubelet %v, %d permutations, machine %v closest %v, providers %v",
					ratios[worst], ours[worst], kube[worst], perms(w.in.providers), w.in.machine, w.in.closest, w.in.providers)
			})
		}
	}
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
