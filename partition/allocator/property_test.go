package allocator

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

func randomConfig(r *rand.Rand) Config {
	n := 1 + r.IntN(8)
	if r.IntN(10) == 0 {
		n = 9 + r.IntN(8) // bounded search
	}
	policies := []string{"none", "best-effort", "restricted", "single-numa-node"}
	cfg := Config{Policy: policies[r.IntN(4)], Scope: []string{ScopeContainer, ScopePod}[r.IntN(2)], PolicyOptions: topologymanager.PolicyOptions{MaxAllowableNUMANodes: max(8, n)}}
	if r.IntN(4) == 0 {
		cfg.TieBreak = "spread"
	}
	if r.IntN(3) == 0 {
		cfg.PreferClosestNUMA = true
		cfg.Distances = map[int]map[int]int{}
		for i := 0; i < n; i++ {
			cfg.Distances[i] = map[int]int{}
			for j := 0; j < n; j++ {
				cfg.Distances[i][j] = 10 + 11*((i^j)&3)
			}
		}
	}
	for i := 0; i < n; i++ {
		nr := NodeResources{ID: i, Memory: uint64(4+r.IntN(12)) * gi, Hugepages: map[uint64]uint64{}, Reserved: map[ResourceName]uint64{}}
		if r.IntN(3) > 0 {
			nr.Hugepages[2<<20] = uint64(r.IntN(3)) * gi
		}
		if r.IntN(4) == 0 {
			nr.Hugepages[1<<30] = uint64(r.IntN(2)) * gi
		}
		if i == 0 || r.IntN(3) == 0 {
			nr.Reserved[ResourceMemory] = uint64(256+r.IntN(768)) << 20
		}
		cfg.Nodes = append(cfg.Nodes, nr)
	}
	return cfg
}

func randomPod(r *rand.Rand, uid string) *corev1.Pod {
	var cs []ctr
	burst := r.IntN(8) == 0
	size := func() string { return fmt.Sprintf("%dMi", 256*(1+r.IntN(40))) }
	for i := r.IntN(3); i > 0; i-- {
		cs = append(cs, ctr{name: fmt.Sprintf("init%d", i), mem: size(), init: true, sidecar: r.IntN(3) == 0})
	}
	for i := 1 + r.IntN(3); i > 0; i-- {
		c := ctr{name: fmt.Sprintf("app%d", i), mem: size(), burstable: burst}
		if r.IntN(3) == 0 {
			c.hp = fmt.Sprintf("%dMi", 2*(1+r.IntN(600)))
		}
		cs = append(cs, c)
	}
	return mkPod(uid, cs...)
}

// runSequence applies random admissions and releases, checking the
// MemoryTable invariants and the block accounting after every step.
func runSequence(t *testing.T, seed uint64, steps int) (State, *Allocator, Config) {
	r := rand.New(rand.NewPCG(seed, 7))
	cfg := randomConfig(r)
	a := mustNew(t, cfg)
	initial := a.State().Machine
	// StateAfter, given the last state and the pods changed since (one
	// or two steps of them), is State.
	prev, changed := a.State(), map[types.UID]bool{}
	var live []string
	for i := 0; i < steps; i++ {
		if len(live) > 0 && r.IntN(3) == 0 {
			k := r.IntN(len(live))
			if ok, err := a.Release(typesUID(live[k])); !ok || err != nil {
				t.Fatalf("seed %d: release %s: %v %v", seed, live[k], ok, err)
			}
			changed[typesUID(live[k])] = true
			live = append(live[:k], live[k+1:]...)
		} else {
			uid := fmt.Sprintf("pod-%03d", i)
			d, err := a.Admit(randomPod(r, uid))
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if d.Admitted {
				live = append(live, uid)
				changed[typesUID(uid)] = true
			}
		}
		checkState(t, a)
		if i%2 == 1 {
			after := a.StateAfter(prev, changed)
			j1, _ := json.Marshal(after)
			j2, _ := json.Marshal(a.State())
			if string(j1) != string(j2) {
				t.Fatalf("seed %d step %d: StateAfter\n%s\nState\n%s", seed, i, j1, j2)
			}
			prev, changed = after, map[types.UID]bool{}
		}
	}
	final := a.State()
	for _, uid := range live {
		if ok, _ := a.Release(typesUID(uid)); !ok {
			t.Fatalf("seed %d: release %s failed", seed, uid)
		}
		checkState(t, a)
	}
	if !reflect.DeepEqual(initial, a.State().Machine) {
		t.Fatalf("seed %d: releasing everything did not restore the initial tables", seed)
	}
	return final, a, cfg
}

func TestPropertyInvariants(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 40
	}
	for s := 0; s < seeds; s++ {
		runSequence(t, uint64(s), 60)
	}
}

// The same operations give the same State, byte for byte, and a restored
// allocator continues exactly like the original.
func TestPropertyDeterministicAndRestorable(t *testing.T) {
	for s := 0; s < 30; s++ {
		st1, _, cfg := runSequence(t, uint64(1000+s), 40)
		st2, _, _ := runSequence(t, uint64(1000+s), 40)
		j1, _ := json.Marshal(st1)
		j2, _ := json.Marshal(st2)
		if string(j1) != string(j2) {
			t.Fatalf("seed %d: non-deterministic state", 1000+s)
		}
		a, drift, err := Restore(cfg, st1)
		if err != nil || len(drift) > 0 {
			t.Fatalf("seed %d: restore: %v %v", 1000+s, drift, err)
		}
		j3, _ := json.Marshal(a.State())
		if string(j1) != string(j3) {
			t.Fatalf("seed %d: restored state differs", 1000+s)
		}
		checkState(t, a)
	}
}
