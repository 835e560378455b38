package nodeview

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
)

// The memory controller's half of the usage view, for a kubelet shown its
// partition's NUMA nodes as the machine (cgroup v1, `view hold
// --meminfo`). cAdvisor's root container takes the Node's memory usage and
// working set, and so the eviction manager's memory.available (MemTotal −
// working set), from the root memory cgroup's memory.usage_in_bytes and
// memory.stat. The slice's own files there (UsageBinds) count the slice's
// pages only: the kernel, the host's daemons and their page cache on the
// partition's nodes were memory kubelet thought free, and the kernel's
// OOM killer came before kubelet's eviction. These files are made instead
// from the nodes' own figures (/sys/devices/system/node/nodeN/meminfo) at
// every read: the root memory cgroup is the memory of the nodes. The
// CPU, cpuacct and blkio controllers' root files stay the slice's.

// MemcgDir is the v1 memory controller's root, relative to the host's root.
var MemcgDir = path.Join(CgroupRoot, "memory")

// The root memory cgroup's files the view serves.
const (
	MemcgUsageFile     = "memory.usage_in_bytes"
	MemcgSwapUsageFile = "memory.memsw.usage_in_bytes"
	MemcgStatFile      = "memory.stat"
)

// memcgStatKeys are the memory.stat keys (each also as total_<key>, the
// hierarchy's) that a node's meminfo has, in bytes, by its name there.
var memcgStatKeys = map[string]string{
	"cache": "FilePages", "rss": "AnonPages", "rss_huge": "AnonHugePages", "shmem": "Shmem",
	"mapped_file": "Mapped", "dirty": "Dirty", "writeback": "Writeback", "swapcached": "SwapCached",
	"inactive_anon": "Inactive(anon)", "active_anon": "Active(anon)",
	"inactive_file": "Inactive(file)", "active_file": "Active(file)", "unevictable": "Unevictable",
}

// sumNodes adds up the nodes' meminfo figures.
func sumNodes(nodes []numa.NodeMeminfo) numa.NodeMeminfo {
	sum := numa.NodeMeminfo{}
	for _, n := range nodes {
		for k, v := range n {
			sum[k] += v
		}
	}
	return sum
}

// MemcgUsage is the root memory cgroup's memory.usage_in_bytes for the
// nodes summed in sum: all their memory that is not free (MemTotal −
// MemFree). The kernel's own figure for the root counts file and
// anonymous pages only (mm/memcontrol.c, mem_cgroup_usage), so the
// kernel's memory (slab, page tables, stacks) would be "available" to
// kubelet that no pod can ever have: its memory.available (MemTotal −
// working set) would stay above the eviction threshold on a full node,
// and the kernel's OOM killer would come first. Counted as used, the
// working set (this less total_inactive_file) leaves available = free +
// inactive file pages, which reaches the threshold as the nodes fill.
func MemcgUsage(sum numa.NodeMeminfo) []byte {
	return fmt.Appendf(nil, "%d\n", used(sum))
}

func used(sum numa.NodeMeminfo) uint64 { return sub(sum["MemTotal"], sum["MemFree"]) }

// MemcgSwapUsage is memory.memsw.usage_in_bytes: MemcgUsage's figure and
// the swap in use, which is the host's (swap belongs to no node).
func MemcgSwapUsage(sum numa.NodeMeminfo, hostMeminfo []byte) ([]byte, error) {
	lines, err := parseHostMeminfo(hostMeminfo)
	if err != nil {
		return nil, err
	}
	host := valuesOf(lines)
	return fmt.Appendf(nil, "%d\n", used(sum)+sub(host["SwapTotal"], host["SwapFree"])), nil
}

// MemcgStat is the root memory cgroup's memory.stat for the nodes summed
// in sum: the host's root file's lines in its order, each figure a node
// keeps (memcgStatKeys, and its total_ form) the nodes' sum; the others
// (event counts, swap, the limits) the host's.
func MemcgStat(host []byte, sum numa.NodeMeminfo) ([]byte, error) {
	var out bytes.Buffer
	for i, line := range strings.Split(strings.TrimRight(string(host), "\n"), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if _, err := strconv.ParseUint(v, 10, 64); !ok || k == "" || err != nil {
			return nil, fmt.Errorf("%s line %d %q: want \"key value\"", MemcgStatFile, i+1, line)
		}
		if node, ok := memcgStatKeys[strings.TrimPrefix(k, "total_")]; ok {
			v = strconv.FormatUint(sum[node], 10)
		}
		fmt.Fprintf(&out, "%s %s\n", k, v)
	}
	return out.Bytes(), nil
}
