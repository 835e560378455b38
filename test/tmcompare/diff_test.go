package tmcompare

import (
	"fmt"
	"math/rand/v2"
	"testing"

	tm "github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// check runs both implementations on one input and fails on any
// difference in the merged hint or the admit decision.
func check(t *testing.T, what string, in input) {
	t.Helper()
	p, err := newPair(in)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	o, oa := p.runOurs()
	k, ka := p.runKubelet()
	if !same(o, oa, k, ka) {
		t.Fatalf("%s (%s, machine %v, closest %v, providers %v):\n ours    %v admit=%v\n kubelet %v admit=%v",
			what, in.policy, in.machine, in.closest, in.providers, o, oa, k, ka)
	}
}

// TestRandomEqualsKubelet: arbitrary inputs at 1-16 nodes and at 24, 32,
// 48 and 62 (the bounded search, never bounded within 4096
// permutations), every policy.
func TestRandomEqualsKubelet(t *testing.T) {
	perNode := 2000
	if testing.Short() {
		perNode = 200
	}
	r := rand.New(rand.NewPCG(16, 2))
	total := 0
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 32, 48, 62} {
		for i := 0; i < perNode; i++ {
			check(t, fmt.Sprintf("random %d nodes #%d", n, i), randomInput(r, n, 4096, policies[i%3]))
			total++
		}
	}
	t.Logf("%d random inputs identical", total)
}

// TestShapedEqualsKubelet: memory-manager-shaped admissions at 1-12 nodes
// (full 2^n-1 lists) and the all-masks worst case at 9-14 nodes.
func TestShapedEqualsKubelet(t *testing.T) {
	perNode := 300
	if testing.Short() {
		perNode = 30
	}
	r := rand.New(rand.NewPCG(16, 3))
	total := 0
	for n := 1; n <= 12; n++ {
		for i := 0; i < perNode; i++ {
			check(t, fmt.Sprintf("shaped %d nodes #%d", n, i), shapedInput(r, n, 1<<18, policies[i%3]))
			total++
		}
	}
	for n := 9; n <= 14; n++ {
		for _, pol := range policies {
			check(t, fmt.Sprintf("all masks %d nodes", n), allMasksInput(n, pol))
			total++
		}
	}
	t.Logf("%d shaped inputs identical", total)
}

// TestTimedEqualsKubelet: every input BenchmarkRatio times, none's
// included, gets kubelet's answer, so its speed-ups are of the same
// decisions.
func TestTimedEqualsKubelet(t *testing.T) {
	total := 0
	for _, set := range ratioInputs() {
		for i, in := range set {
			check(t, fmt.Sprintf("ratio %d nodes %s #%d", len(in.machine), in.policy, i), in)
			in.policy = tm.PolicyNone
			check(t, fmt.Sprintf("ratio %d nodes none #%d", len(in.machine), i), in)
			total += 2
		}
	}
	for i, in := range above8Inputs() {
		check(t, fmt.Sprintf("above 8 nodes #%d", i), in)
		total++
	}
	t.Logf("%d timed inputs identical", total)
}
