package nodeview

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// Usage is a cgroup's usage as cAdvisor makes it of its files: read at
// the root cgroup in a partition's mount namespace (v1), the figures its
// kubelet reports for its Node (the slice's CPU, UsageBinds; the shown
// nodes' memory, memcg.go); read at a slice, the slice's own.
type Usage struct {
	// CPUNanoseconds is the CPU time the slice used since it was made
	// (the summary API's node usageCoreNanoSeconds).
	CPUNanoseconds uint64 `json:"cpuNanoseconds"`
	// MemoryUsageBytes is its memory (v2: anon + file of memory.stat,
	// as runc counts the root; v1: memory.usage_in_bytes), and
	// MemoryWorkingSetBytes that less the inactive file cache: the
	// figure `kubectl top node` shows and memory.available subtracts.
	MemoryUsageBytes      uint64 `json:"memoryUsageBytes"`
	MemoryWorkingSetBytes uint64 `json:"memoryWorkingSetBytes"`
	// MemoryAnonBytes is the part its processes hold themselves (heap,
	// stacks: memory.stat's anon, v1 total_rss): the working set less
	// the page cache and tmpfs files it was charged for, which a host
	// with other storage, or a quieter moment, holds differently.
	MemoryAnonBytes uint64 `json:"memoryAnonBytes"`
}

// maxStatFile bounds the read of a cgroup stat file.
const maxStatFile = 1 << 20

// ReadUsage reads slice's usage below root ("" is the root cgroup): the
// unified hierarchy's files when v2, else the v1 cpuacct and memory
// controllers'.
func ReadUsage(root fsutil.Root, v2 bool, slice string) (Usage, error) {
	var u Usage
	if v2 {
		dir := path.Join(CgroupRoot, slice)
		cpu, err := statFile(root, path.Join(dir, "cpu.stat"))
		if err != nil {
			return Usage{}, err
		}
		mem, err := statFile(root, path.Join(dir, "memory.stat"))
		if err != nil {
			return Usage{}, err
		}
		u.CPUNanoseconds = cpu["usage_usec"] * 1000
		u.MemoryUsageBytes = mem["anon"] + mem["file"]
		u.MemoryWorkingSetBytes = sub(u.MemoryUsageBytes, mem["inactive_file"])
		u.MemoryAnonBytes = mem["anon"]
		return u, nil
	}
	cpu, err := uintFile(root, path.Join(CgroupRoot, "cpuacct", slice, "cpuacct.usage"))
	if err != nil {
		return Usage{}, err
	}
	usage, err := uintFile(root, path.Join(CgroupRoot, "memory", slice, "memory.usage_in_bytes"))
	if err != nil {
		return Usage{}, err
	}
	mem, err := statFile(root, path.Join(CgroupRoot, "memory", slice, "memory.stat"))
	if err != nil {
		return Usage{}, err
	}
	u.CPUNanoseconds = cpu
	u.MemoryUsageBytes = usage
	u.MemoryWorkingSetBytes = sub(usage, mem["total_inactive_file"])
	u.MemoryAnonBytes = mem["total_rss"]
	return u, nil
}

// statFile reads a cgroup's "key value" lines.
func statFile(root fsutil.Root, rel string) (map[string]uint64, error) {
	b, err := root.ReadFile(rel, maxStatFile)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		k, v, ok := strings.Cut(line, " ")
		n, err := strconv.ParseUint(v, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s line %d %q: want \"key value\"", root.Path(rel), i+1, line)
		}
		out[k] = n
	}
	return out, nil
}

// uintFile reads a file holding one number (a cgroup file, a pool count).
func uintFile(root fsutil.Root, rel string) (uint64, error) {
	b, err := root.ReadFile(rel, maxStatFile)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", root.Path(rel), strings.TrimSpace(string(b)))
	}
	return n, nil
}
