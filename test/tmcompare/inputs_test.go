package tmcompare

import (
	"math/bits"
	"math/rand/v2"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	tm "github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

var policies = []string{tm.PolicyBestEffort, tm.PolicyRestricted, tm.PolicySingleNUMANode}

func idsOf(mask uint64, machine []int) []int {
	var ids []int
	for x := mask; x != 0; x &= x - 1 {
		ids = append(ids, machine[bits.TrailingZeros64(x)])
	}
	return ids
}

func hint(pref bool, ids []int) tm.Hint { return tm.NewHint(pref, ids...) }

// machineOf draws n node ids: 0..n-1, or (half the time) n of 0..n+1, so
// that machines have holes and hints may name nodes outside the machine.
func machineOf(r *rand.Rand, n int) []int {
	if r.IntN(2) == 0 {
		return r.Perm(n + 2)[:n]
	}
	return r.Perm(n)
}

func distances(r *rand.Rand, span int) map[int]map[int]int {
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

// randomInput is an arbitrary merge problem on n nodes: up to 4
// providers, up to 3 resources each, up to 5 hints a list, with nil and
// empty maps and lists, don't-care and empty affinities, foreign nodes and
// lists shared by two resources; at most maxPerms permutations.
func randomInput(r *rand.Rand, n, maxPerms int, policy string) input {
	for {
		in := input{policy: policy, machine: machineOf(r, n), closest: r.IntN(2) == 0, dist: distances(r, n+2)}
		perms := 1
		for p := 1 + r.IntN(4); p > 0; p-- {
			switch r.IntN(20) {
			case 0:
				in.providers = append(in.providers, nil)
				continue
			case 1:
				in.providers = append(in.providers, tm.ProviderHints{})
				continue
			}
			ph := tm.ProviderHints{}
			for k := 1 + r.IntN(3); k > 0; k-- {
				name := string(rune('a' + r.IntN(26)))
				switch r.IntN(10) {
				case 0:
					ph[name] = nil
					continue
				case 1:
					ph[name] = []tm.Hint{}
					continue
				}
				var l []tm.Hint
				for c := 1 + r.IntN(5); c > 0; c-- {
					pref := r.IntN(3) != 0
					switch x := r.IntN(20); {
					case x < 3:
						l = append(l, tm.DontCare(pref))
					case x == 3:
						l = append(l, tm.Hint{Affinity: &bitmask.NodeSet{}, Preferred: pref})
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
						l = append(l, hint(pref, ids))
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

// fitting lists what a kubelet provider would for one request: every node
// set whose free amount covers it, the smallest such sets preferred, in
// kubelet's order (ascending mask over the machine's nodes). maxSize > 0
// caps the set size (the CPU manager's hints rarely span many nodes in
// these inputs, which keeps kubelet's Cartesian product tractable).
func fitting(r *rand.Rand, machine []int, maxSize int) []tm.Hint {
	n := len(machine)
	free := make([]int, n)
	for i := range free {
		free[i] = r.IntN(10)
	}
	req := 1 + r.IntN(10*n/2+1)
	var masks []uint64
	minSize := n + 1
	for m := uint64(1); m < 1<<n; m++ {
		if maxSize > 0 && bits.OnesCount64(m) > maxSize {
			continue
		}
		sum := 0
		for x := m; x != 0; x &= x - 1 {
			sum += free[bits.TrailingZeros64(x)]
		}
		if sum >= req {
			masks = append(masks, m)
			minSize = min(minSize, bits.OnesCount64(m))
		}
	}
	l := []tm.Hint{}
	for _, m := range masks {
		l = append(l, hint(bits.OnesCount64(m) == minSize, idsOf(m, machine)))
	}
	return l
}

// shapedInput is a memory-manager-shaped admission: one list shared by
// memory and a hugepage size (all node sets that fit), a CPU manager list
// and sometimes a device on one node. Above 8 nodes the hugepage list and
// the CPU manager's multi-node sets are left out, and inputs whose
// Cartesian product exceeds maxPerms are drawn again: kubelet walks the
// product, so beyond that it takes seconds per input.
func shapedInput(r *rand.Rand, n, maxPerms int, policy string) input {
	for {
		in := input{policy: policy, machine: r.Perm(n), dist: distances(r, n)}
		mem := fitting(r, in.machine, 0)
		mm := tm.ProviderHints{"memory": mem}
		cpuMax := 1
		if n <= 8 {
			mm["hugepages-1Gi"] = mem
			cpuMax = 0
		}
		in.providers = []tm.ProviderHints{mm, {"cpu": fitting(r, in.machine, cpuMax)}}
		if r.IntN(3) == 0 {
			in.providers = append(in.providers, tm.ProviderHints{"gpu": {hint(true, []int{r.IntN(n)})}})
		}
		if perms(in.providers) <= maxPerms {
			return in
		}
	}
}

// perms is the size of kubelet's Cartesian product.
func perms(providers []tm.ProviderHints) int {
	p := 1
	for _, ph := range providers {
		for _, l := range ph {
			p *= max(1, len(l))
		}
	}
	return p
}

// allMasksInput is the worst case: one provider lists all 2^n-1
// node sets (single nodes preferred), another one CPU hint.
func allMasksInput(n int, policy string) input {
	in := input{policy: policy, machine: make([]int, n)}
	for i := range in.machine {
		in.machine[i] = i
	}
	var l []tm.Hint
	for m := uint64(1); m < 1<<n; m++ {
		l = append(l, hint(bits.OnesCount64(m) == 1, idsOf(m, in.machine)))
	}
	in.providers = []tm.ProviderHints{{"memory": l}, {"cpu": {hint(true, []int{0, 1})}}}
	return in
}
