// Package drift holds the rules that say whether a partition's slice and
// hugepage pools still are what was planned: `numa-partition status`
// (slices/apply) reports them, and each partition's allocator daemon
// writes them on its Node as the NumaPartitionDrifted condition (#40).
// The comparisons are pure functions over values the callers read; the
// one reader here is the slice's effective cpuset, which both read alike.
// It imports neither of them.
package drift

import (
	"fmt"
	"path"
	"strings"

	"github.com/numa-partition/numa-partition/internal/echo"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

// maxCgroupFile bounds a cpuset file read: a CPU list of the largest
// machine is a few KiB, and a FIFO or a grown file at its path must not
// hang or bloat the reader.
const maxCgroupFile = 1 << 20

// SliceCgroup is the cgroup path systemd gives a slice: "a-b.slice" lives
// in "/a.slice/a-b.slice".
func SliceCgroup(name string) string {
	if name == "-.slice" {
		return "/"
	}
	base := strings.TrimSuffix(name, ".slice")
	parts := strings.Split(base, "-")
	var p string
	for i := range parts {
		p += "/" + strings.Join(parts[:i+1], "-") + ".slice"
	}
	return p
}

// Cpuset is what a slice's processes may use, as its cgroup files say
// (the kernel's list format); "" for a file that could not be read.
type Cpuset struct {
	CPUs, Mems string
}

// ReadEffectiveCpuset reads the CPUs and memory nodes a slice's processes
// may use below root: cpuset.cpus.effective and cpuset.mems.effective on
// cgroup v2 (v2 true), the cpuset v1 group's cpuset.effective_cpus and
// cpuset.effective_mems otherwise. A file that is not there (no such
// group) is "".
func ReadEffectiveCpuset(root fsutil.Root, v2 bool, slice string) Cpuset {
	cg := SliceCgroup(slice)
	read := func(rel string) string {
		b, err := root.ReadFile(rel, maxCgroupFile)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if v2 {
		d := path.Join("sys/fs/cgroup", cg)
		return Cpuset{CPUs: read(path.Join(d, "cpuset.cpus.effective")), Mems: read(path.Join(d, "cpuset.mems.effective"))}
	}
	d := path.Join("sys/fs/cgroup/cpuset", cg)
	return Cpuset{CPUs: read(path.Join(d, "cpuset.effective_cpus")), Mems: read(path.Join(d, "cpuset.effective_mems"))}
}

// CpusetDifference is one set of a slice that is not the planned one.
type CpusetDifference struct {
	Slice string
	What  string // "CPUs" or "memory nodes"
	// Planned is the planned set; Now what the cgroup holds, bounded
	// (internal/echo: it is read from a file).
	Planned string
	Now     echo.Value
}

// String is the difference as status reports it.
func (d CpusetDifference) String() string {
	return fmt.Sprintf("%s runs on %s %s, applied %s", d.Slice, d.What, d.Now, d.Planned)
}

// CpusetDifferences compares a slice's effective cpuset (now) with the
// planned sets, as sets (the kernel and the plan may write one set two
// ways). A set that was not read ("") is not compared: the caller says
// why it is missing. A text that is no list is a difference.
func CpusetDifferences(slice string, cpus bitmask.CPUSet, mems bitmask.NodeSet, now Cpuset) []CpusetDifference {
	var out []CpusetDifference
	if now.CPUs != "" {
		if got, err := bitmask.ParseCPUList(now.CPUs); err != nil || !got.Equal(cpus) {
			out = append(out, CpusetDifference{Slice: slice, What: "CPUs", Planned: cpus.String(), Now: echo.Value(now.CPUs)})
		}
	}
	if now.Mems != "" && !mems.IsEmpty() {
		if got, err := bitmask.ParseNodeList(now.Mems); err != nil || got != mems {
			out = append(out, CpusetDifference{Slice: slice, What: "memory nodes", Planned: mems.String(), Now: echo.Value(now.Mems)})
		}
	}
	return out
}

// PoolDifference is a hugepage pool whose page count is not the planned
// one.
type PoolDifference struct {
	Planned hugepool.Pool
	Now     uint64 // pages (nr_hugepages); 0 when the node has no such pool
}

// String names the pool as a kubelet resource ("node1 hugepages-2Mi: 512
// pages planned, 500 now").
func (d PoolDifference) String() string {
	return fmt.Sprintf("node%d %s: %d pages planned, %d now", d.Planned.Node, units.HugepageResource(d.Planned.PageSize), d.Planned.Count, d.Now)
}

// PoolDifferences compares the planned pools with the nodes' pools as
// read (numa discovery: nr_hugepages is Total), by node id. A planned
// pool on a node that was not read is not compared; one of a page size
// the node does not have holds 0 pages.
func PoolDifferences(planned []hugepool.Pool, nodes map[int][]numa.Hugepages) []PoolDifference {
	var out []PoolDifference
	for _, p := range planned {
		pools, ok := nodes[p.Node]
		if !ok {
			continue
		}
		now := uint64(0)
		for _, h := range pools {
			if h.PageSize == p.PageSize {
				now = h.Total
			}
		}
		if now != p.Count {
			out = append(out, PoolDifference{Planned: p, Now: now})
		}
	}
	return out
}

// NodePools are a topology's pools by node id, as PoolDifferences takes
// them.
func NodePools(t *numa.Topology) map[int][]numa.Hugepages {
	m := make(map[int][]numa.Hugepages, len(t.Nodes))
	for _, n := range t.Nodes {
		m[n.ID] = n.Hugepages
	}
	return m
}
