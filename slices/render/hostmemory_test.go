package render

import (
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
)

// On cgroup v2 a partition's kubelet does not count the host's memory on
// its nodes, and its eviction threshold counts on the host's reservation
// there (kubeletgen.MemoryReservations): the bundle carries that
// reservation, for status to warn when the host holds more. On v1 the
// kubelet sees the host's memory, and there is nothing to carry.
func TestBundleCarriesTheHostMemoryReservationOnV2(t *testing.T) {
	for _, mode := range []cgroupmode.Mode{cgroupmode.V2, cgroupmode.V1, cgroupmode.Hybrid} {
		plan := seedPlan()
		plan.Host.CgroupMode = mode
		for i := range plan.Partitions {
			for j := range plan.Partitions[i].Memory {
				plan.Partitions[i].Memory[j].PageSizes = []uint64{2 * mi, gi}
			}
		}
		b, err := Render(plan)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range b.Partitions {
			want := plan.Partitions[i].Kubelet.SystemReservedMemory
			switch got := p.HostMemoryReserved; {
			case mode == cgroupmode.V2 && (got == nil || *got != want):
				t.Errorf("%s on v2: hostMemoryReservedBytes %v, want %d (its systemReserved)", p.Name, got, want)
			case mode != cgroupmode.V2 && got != nil:
				t.Errorf("%s on %s: hostMemoryReservedBytes %d, want none", p.Name, mode, *got)
			}
		}
	}
}

// #41: the bundle carries each partition's kube_reserved_memory, against
// which status weighs what its daemons use; a partition's own value wins.
func TestBundleCarriesEachPartitionsKubeReservedMemory(t *testing.T) {
	plan := seedPlan()
	plan.Partitions[len(plan.Partitions)-1].Kubelet.KubeReservedMemory = 768 * mi
	b, err := Render(plan)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range b.Partitions {
		want := plan.Partitions[i].Kubelet.KubeReservedMemory
		if got := p.KubeReservedMemory; got == nil || *got != want {
			t.Errorf("%s: kubeReservedMemoryBytes %v, want %d", p.Name, got, want)
		}
	}
	if got := b.Partitions[len(b.Partitions)-1].KubeReservedMemory; got == nil || *got != 768*mi {
		t.Errorf("the last partition's own value was not carried: %v", got)
	}
}
