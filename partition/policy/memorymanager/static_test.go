package memorymanager

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

const gi = uint64(1) << 30

func randomStatic(t *testing.T, r *rand.Rand, n int) *Static {
	var nodes []NodeResources
	for i := 0; i < n; i++ {
		nr := NodeResources{ID: i, Memory: uint64(2+r.IntN(8)) * gi, Hugepages: map[uint64]uint64{2 << 20: uint64(r.IntN(2)) * gi}, Reserved: map[ResourceName]uint64{}}
		if i == 0 {
			nr.Reserved[ResourceMemory] = gi / 2
		}
		nodes = append(nodes, nr)
	}
	s, err := NewStatic(nodes)
	if err != nil {
		t.Fatal(err)
	}
	for k := r.IntN(2 * n); k > 0; k-- {
		pod := &Pod{UID: fmt.Sprint("p", k), App: []Container{{Name: "c", Requests: randomRequest(r)}}}
		if err := s.Allocate(pod, &pod.App[0], topologymanager.DontCare(false)); err == nil && r.IntN(4) == 0 {
			s.RemovePod(pod.UID)
		}
	}
	return s
}

func randomRequest(r *rand.Rand) map[ResourceName]uint64 {
	req := map[ResourceName]uint64{ResourceMemory: uint64(1+r.IntN(24)) * gi / 2}
	if r.IntN(3) == 0 {
		req["hugepages-2Mi"] = uint64(1+r.IntN(4)) * gi / 4
	}
	return req
}

// TestBoundedKeepsPreferredAndNarrowest checks the claim behind the
// bounded search, on partitions small enough for the exact walk: it lists
// exactly kubelet's preferred hints and exactly kubelet's narrowest hints,
// with the same minAffinitySize.
func TestBoundedKeepsPreferredAndNarrowest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		s := randomStatic(t, r, 1+r.IntN(8))
		req := s.resolve(randomRequest(r))
		exact, emin := s.exactMasks("x", req)
		bounded, bmin := s.boundedMasks("x", req)
		if emin != bmin {
			t.Fatalf("case %d: minAffinitySize exact %d bounded %d", i, emin, bmin)
		}
		if got, want := ofSize(bounded, emin), ofSize(exact, emin); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: preferred hints bounded %b exact %b", i, got, want)
		}
		if len(exact) > 0 {
			narrow := bits.OnesCount64(exact[0])
			for _, m := range exact {
				narrow = min(narrow, bits.OnesCount64(m))
			}
			if got, want := ofSize(bounded, narrow), ofSize(exact, narrow); !reflect.DeepEqual(got, want) {
				t.Fatalf("case %d: narrowest hints bounded %b exact %b", i, got, want)
			}
		} else if len(bounded) > 0 {
			t.Fatalf("case %d: bounded found %b where nothing fits", i, bounded)
		}
		for _, m := range bounded {
			if !containsMask(exact, m) {
				t.Fatalf("case %d: bounded hint %b is not a kubelet hint", i, m)
			}
		}
	}
}

func ofSize(ms []uint64, size int) []uint64 {
	var out []uint64
	for _, m := range ms {
		if bits.OnesCount64(m) == size {
			out = append(out, m)
		}
	}
	sortMasks(out)
	return out
}

func sortMasks(ms []uint64) {
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			if ms[j] < ms[i] {
				ms[i], ms[j] = ms[j], ms[i]
			}
		}
	}
}

func containsMask(ms []uint64, m uint64) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// M6: an allocated container's hints are its blocks, preferred; nil when
// the request changed.
func TestM6RegeneratedHints(t *testing.T) {
	s, err := NewStatic([]NodeResources{{ID: 0, Memory: 8 * gi, Reserved: map[ResourceName]uint64{ResourceMemory: gi}}, {ID: 1, Memory: 8 * gi}})
	if err != nil {
		t.Fatal(err)
	}
	pod := &Pod{UID: "p", App: []Container{{Name: "c", Requests: map[ResourceName]uint64{ResourceMemory: 2 * gi}}}}
	if err := s.Allocate(pod, &pod.App[0], topologymanager.NewHint(true, 1)); err != nil {
		t.Fatal(err)
	}
	h := s.ContainerHints(pod, &pod.App[0])
	if len(h["memory"]) != 1 || !h["memory"][0].Equal(topologymanager.NewHint(true, 1)) {
		t.Fatalf("regenerated: %v", h)
	}
	changed := &Container{Name: "c", Requests: map[ResourceName]uint64{ResourceMemory: 3 * gi}}
	if h := s.ContainerHints(pod, changed); h != nil {
		t.Fatalf("changed request must give nil, got %v", h)
	}
	if h := s.PodHints(pod); len(h["memory"]) != 1 {
		t.Fatalf("pod hints regenerate too: %v", h)
	}
}

// M7: pod requests.
func TestM7PodRequests(t *testing.T) {
	pod := &Pod{
		Init: []Container{
			{Name: "s", Init: true, Restartable: true, Requests: map[ResourceName]uint64{ResourceMemory: 1 * gi}},
			{Name: "i", Init: true, Requests: map[ResourceName]uint64{ResourceMemory: 5 * gi, "hugepages-1Gi": gi}},
		},
		App: []Container{
			{Name: "a", Requests: map[ResourceName]uint64{ResourceMemory: 1 * gi, "hugepages-2Mi": gi}},
			{Name: "b", Requests: map[ResourceName]uint64{ResourceMemory: 2 * gi}},
		},
	}
	got := PodRequests(pod)
	want := map[ResourceName]uint64{ResourceMemory: 6 * gi, "hugepages-2Mi": gi} // max(1+2+1, 1+5); hugepages-1Gi only in init: absent
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

// M4: the hint list, preferred flags and the {} of "nothing fits".
func TestM4Hints(t *testing.T) {
	s, err := NewStatic([]NodeResources{
		{ID: 0, Memory: 4 * gi, Reserved: map[ResourceName]uint64{ResourceMemory: gi}},
		{ID: 1, Memory: 4 * gi}, {ID: 2, Memory: 4 * gi},
	})
	if err != nil {
		t.Fatal(err)
	}
	pod := &Pod{UID: "p", App: []Container{{Name: "c", Requests: map[ResourceName]uint64{ResourceMemory: 3500 << 20}}}}
	h := s.ContainerHints(pod, &pod.App[0])["memory"]
	// Node 0 has 3Gi: only 1 and 2 alone; every pair and the triple fit.
	want := []topologymanager.Hint{
		topologymanager.NewHint(true, 1), topologymanager.NewHint(true, 2),
		topologymanager.NewHint(false, 0, 1), topologymanager.NewHint(false, 0, 2), topologymanager.NewHint(false, 1, 2),
		topologymanager.NewHint(false, 0, 1, 2),
	}
	if len(h) != len(want) {
		t.Fatalf("hints %v", h)
	}
	for i := range want {
		if !h[i].Equal(want[i]) {
			t.Fatalf("hint %d: %v want %v", i, h[i], want[i])
		}
	}
	big := &Container{Name: "d", Requests: map[ResourceName]uint64{ResourceMemory: 100 * gi}}
	if h := s.ContainerHints(pod, big); h == nil || len(h) != 0 {
		t.Fatalf("nothing fits must be an empty non-nil map, got %#v", h)
	}
}

func TestBounded64Nodes(t *testing.T) {
	var nodes []NodeResources
	for i := 0; i < 64; i++ {
		nodes = append(nodes, NodeResources{ID: i, Memory: 8 * gi, Reserved: map[ResourceName]uint64{ResourceMemory: gi}})
	}
	s, err := NewStatic(nodes)
	if err != nil {
		t.Fatal(err)
	}
	pod := &Pod{UID: "p", App: []Container{{Name: "c", Requests: map[ResourceName]uint64{ResourceMemory: 20 * gi}}}}
	h := s.ContainerHints(pod, &pod.App[0])["memory"]
	// 7Gi per node: 3 nodes are needed; every 3-set is a preferred hint,
	// the numerically smallest boundedHints are listed.
	if len(h) != boundedHints || !h[0].Equal(topologymanager.NewHint(true, 0, 1, 2)) {
		t.Fatalf("%d hints, first %v", len(h), h[0])
	}
	if err := s.Allocate(pod, &pod.App[0], topologymanager.DontCare(false)); err != nil {
		t.Fatal(err)
	}
	if err := CheckInvariants(s.Machine()); err != nil {
		t.Fatal(err)
	}
	if got := s.Blocks("p")["c"][0].NUMAAffinity; !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Fatalf("allocated on %v", got)
	}
}
