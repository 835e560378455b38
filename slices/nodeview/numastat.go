package nodeview

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// The host's memory on a partition's nodes, for status. On cgroup v2 a
// partition's kubelet counts only its slice's memory as used (usage.go):
// what else the nodes hold (the host's daemons, their page cache and
// tmpfs, the kernel) is covered only by the host's reservation there,
// which its eviction threshold counts on (kubeletgen.MemoryReservations).
// status measures it: the nodes' used memory less what the slice is
// charged on them.

// chargedKeys are the v2 memory.numa_stat lines that add up to what a
// cgroup is charged on a node without counting a page twice (shmem is
// inside file, the LRU and THP lines inside anon and file).
var chargedKeys = []string{"anon", "file", "kernel_stack", "pagetables", "sec_pagetables",
	"slab_reclaimable", "slab_unreclaimable"}

// ParseNumaStat reads a cgroup v2 memory.numa_stat ("key N0=bytes
// N1=bytes …" lines) into the bytes the cgroup is charged per node.
func ParseNumaStat(b []byte) (map[int]uint64, error) {
	out := map[int]uint64{}
	want := map[string]bool{}
	for _, k := range chargedKeys {
		want[k] = true
	}
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("memory.numa_stat line %d %q: want \"key N0=bytes …\"", i+1, line)
		}
		for _, kv := range f[1:] {
			n, v, ok := strings.Cut(kv, "=")
			id, err1 := strconv.Atoi(strings.TrimPrefix(n, "N"))
			bytes, err2 := strconv.ParseUint(v, 10, 64)
			if !ok || !strings.HasPrefix(n, "N") || err1 != nil || id < 0 || err2 != nil {
				return nil, fmt.Errorf("memory.numa_stat line %d: %q is not \"N<node>=<number>\"", i+1, kv)
			}
			if !want[f[0]] {
				continue // event counts, and lines inside the charged ones
			}
			if bytes > 1<<53 {
				return nil, fmt.Errorf("memory.numa_stat line %d: %s %q is not a size", i+1, f[0], kv)
			}
			out[id] += bytes
		}
	}
	return out, nil
}

// ReadSliceNodeMemory reads what slice is charged on each NUMA node
// (cgroup v2).
func ReadSliceNodeMemory(root fsutil.Root, slice string) (map[int]uint64, error) {
	rel := path.Join(CgroupRoot, slice, "memory.numa_stat")
	b, err := root.ReadFile(rel, maxStatFile)
	if err != nil {
		return nil, err
	}
	m, err := ParseNumaStat(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", root.Path(rel), err)
	}
	return m, nil
}

// NodeUse is a NUMA node's memory as the kernel counts it.
type NodeUse struct {
	Node                             int
	TotalBytes, FreeBytes, HugeBytes uint64 // HugeBytes: its hugepage pools
}

// HostMemoryOn is the memory on nodes that is neither free, nor in a
// hugepage pool, nor charged to the slice (charged, ParseNumaStat's): the
// host's and the kernel's.
func HostMemoryOn(nodes []NodeUse, charged map[int]uint64) uint64 {
	var used, slice uint64
	for _, n := range nodes {
		used += sub(sub(n.TotalBytes, n.FreeBytes), n.HugeBytes)
		slice += charged[n.Node]
	}
	return sub(used, slice)
}
