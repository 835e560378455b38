package memorymanager

import (
	"reflect"
	"testing"
)

// TestKubeletLayout: the memory table is laid out as kubelet's
// getDefaultMachineState lays it out (MemTotal as the total, the hugepage
// pools taken out of Allocatable), and a checkpoint in the earlier layout
// (total without the pools) is still adopted, in kubelet's layout.
func TestKubeletLayout(t *testing.T) {
	nodes := []NodeResources{{ID: 0, Memory: 10 * gi, Hugepages: map[uint64]uint64{2 << 20: 4 * gi},
		Reserved: map[ResourceName]uint64{ResourceMemory: gi, "hugepages-2Mi": gi}}}
	s, err := NewStatic(nodes)
	if err != nil {
		t.Fatal(err)
	}
	nm := s.Machine()
	if got, want := nm[0].MemoryMap[ResourceMemory], (MemoryTable{TotalMemSize: 10 * gi, SystemReserved: gi, Allocatable: 5 * gi, Free: 5 * gi}); got != want {
		t.Errorf("memory: %+v, want kubelet's %+v", got, want)
	}
	if got, want := nm[0].MemoryMap["hugepages-2Mi"], (MemoryTable{TotalMemSize: 4 * gi, SystemReserved: gi, Allocatable: 3 * gi, Free: 3 * gi}); got != want {
		t.Errorf("hugepages-2Mi: %+v, want kubelet's %+v", got, want)
	}
	if err := CheckInvariants(nm); err != nil {
		t.Fatal(err)
	}
	old := s.Machine()
	mem := old[0].MemoryMap[ResourceMemory]
	mem.TotalMemSize = 6 * gi // the earlier layout: MemTotal less the pools
	old[0].MemoryMap[ResourceMemory] = mem
	if d := s.Drift(old); len(d) != 0 {
		t.Fatalf("earlier layout reported as drift: %v", d)
	}
	if err := s.Adopt(old, nil, nil); err != nil {
		t.Fatalf("earlier layout refused: %v", err)
	}
	if got := s.Machine(); !reflect.DeepEqual(got, nm) {
		t.Fatalf("adopted %+v, want %+v", got, nm)
	}
	broken := s.Machine()
	mem = broken[0].MemoryMap[ResourceMemory]
	mem.Allocatable, mem.Free = mem.Allocatable+gi, mem.Free+gi
	broken[0].MemoryMap[ResourceMemory] = mem
	if err := CheckInvariants(broken); err == nil {
		t.Fatal("allocatable beyond MemTotal less reserved and pools accepted")
	}
}
