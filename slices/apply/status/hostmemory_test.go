package status

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// On cgroup v2, status measures the host's memory on each partition's
// nodes (neither free, nor hugepages, nor the slice's) and warns when it
// is more than the host's reservation there, which that partition's
// kubelet counts on: the e2e's v2 boot had 900 MiB of the VM's in-memory
// root file system on node 0 against 64 MiB reserved, and the kernel
// OOM-killed a pod before kubelet evicted it.
func TestStatusWarnsWhenTheHostOutgrowsItsReservationOnV2(t *testing.T) {
	const mi = 1 << 20
	root := t.TempDir()
	dir := filepath.Join(root, "sys/fs/cgroup/node0.slice")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "memory.numa_stat"), []byte("anon N0=400000000 N1=7\nfile N0=279477248 N1=7\n"), 0o644))
	node := NodeState{Node: 0, TotalBytes: 1950 * mi, FreeBytes: 370 * mi, Hugepages: []numa.Hugepages{{PageSize: 2 * mi, Total: 16, Free: 16}}}

	for _, c := range []struct {
		reserved *uint64
		warn     bool
	}{{reserved: ptrTo(uint64(64 * mi)), warn: true}, {reserved: ptrTo(uint64(1024 * mi))}, {reserved: nil}} {
		r := &statusRun{o: Options{Root: root}, mode: cgroupmode.V2, st: &Status{}}
		ps := PartitionStatus{Name: "node0", Nodes: []NodeState{node}}
		r.hostMemory(record.Partition{Name: "node0", Slice: "node0.slice", Nodes: bitmask.NewNodeSet(0), HostMemoryReserved: c.reserved}, &ps)
		if ps.HostMemoryError != "" || ps.HostMemoryBytes == nil {
			t.Fatalf("host memory not read: %q", ps.HostMemoryError)
		}
		// 1950 − 370 free − 32 hugepages − 648 the slice's = 900 MiB.
		if *ps.HostMemoryBytes != 900*mi {
			t.Errorf("host memory %d MiB, want 900", *ps.HostMemoryBytes/mi)
		}
		warned := len(r.st.Warnings) == 1 && strings.Contains(r.st.Warnings[0], "the host holds 900Mi on its NUMA nodes 0, more than its reservation there (64Mi)")
		if warned != c.warn || (!c.warn && len(r.st.Warnings) > 0) {
			t.Errorf("reserved %v: warnings %q, want a warning: %v", c.reserved, r.st.Warnings, c.warn)
		}
		if len(r.st.Problems) > 0 {
			t.Errorf("problems %q: the host's memory is a warning, the health stays", r.st.Problems)
		}
	}

	// A slice without the file (no memory controller): said, not guessed.
	must(t, os.Remove(filepath.Join(dir, "memory.numa_stat")))
	r := &statusRun{o: Options{Root: root}, mode: cgroupmode.V2, st: &Status{}}
	ps := PartitionStatus{Name: "node0", Nodes: []NodeState{node}}
	r.hostMemory(record.Partition{Name: "node0", Slice: "node0.slice", Nodes: bitmask.NewNodeSet(0)}, &ps)
	if ps.HostMemoryBytes != nil || !strings.Contains(ps.HostMemoryError, "memory.numa_stat") {
		t.Errorf("without memory.numa_stat: %v, %q; want an error naming the file", ps.HostMemoryBytes, ps.HostMemoryError)
	}
}

func ptrTo[T any](v T) *T { return &v }
