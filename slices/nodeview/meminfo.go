package nodeview

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
)

// The memory half: /proc/meminfo as a partition's kubelet is to read it,
// its NUMA nodes' memory as the machine's. cAdvisor takes the Node's
// memory capacity, and the root's memory limit that memory.available is
// measured against, from its MemTotal; node agents with a hostPath /proc
// read the rest. The kernel keeps these figures per node
// (/sys/devices/system/node/nodeN/meminfo), in another format and
// without the host-wide lines, so the file is made here, at every read,
// from both: served live by FUSE (serve.go), as LXCFS serves containers.

// nodeKeys are the /proc/meminfo lines that are a sum over NUMA nodes,
// each by the same name in a node's meminfo.
var nodeKeys = map[string]bool{
	"MemTotal": true, "MemFree": true, "SwapCached": true,
	"Active": true, "Inactive": true, "Active(anon)": true, "Inactive(anon)": true,
	"Active(file)": true, "Inactive(file)": true, "Unevictable": true, "Mlocked": true,
	"Dirty": true, "Writeback": true, "AnonPages": true, "Mapped": true, "Shmem": true,
	"KReclaimable": true, "Slab": true, "SReclaimable": true, "SUnreclaim": true,
	"KernelStack": true, "PageTables": true, "SecPageTables": true, "NFS_Unstable": true,
	"Bounce": true, "WritebackTmp": true, "AnonHugePages": true, "ShmemHugePages": true,
	"ShmemPmdMapped": true, "FileHugePages": true, "FilePmdMapped": true, "Unaccepted": true,
	"HugePages_Total": true, "HugePages_Free": true, "HugePages_Surp": true,
}

// hostLine is one line of the host's /proc/meminfo.
type hostLine struct {
	key   string
	value uint64 // bytes for a kB line, else the count
	kB    bool
}

// parseHostMeminfo reads /proc/meminfo's "Key:   value[ kB]" lines, in
// order; anything else is an error naming the line.
func parseHostMeminfo(b []byte) ([]hostLine, error) {
	var out []hostLine
	seen := map[string]bool{}
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		f := strings.Fields(rest)
		if !ok || key == "" || strings.ContainsAny(key, " \t") || len(f) < 1 || len(f) > 2 || (len(f) == 2 && f[1] != "kB") {
			return nil, fmt.Errorf("/proc/meminfo line %d %q: want \"Key: value[ kB]\"", i+1, line)
		}
		if seen[key] {
			return nil, fmt.Errorf("/proc/meminfo line %d: key %s appears twice", i+1, key)
		}
		seen[key] = true
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || v > 1<<53 {
			return nil, fmt.Errorf("/proc/meminfo line %d %q: value is not a size", i+1, line)
		}
		l := hostLine{key: key, value: v, kB: len(f) == 2}
		if l.kB {
			l.value = v << 10
		}
		out = append(out, l)
	}
	if !seen["MemTotal"] {
		return nil, fmt.Errorf("/proc/meminfo has no MemTotal line")
	}
	return out, nil
}

// valuesOf is the host's lines by key.
func valuesOf(lines []hostLine) map[string]uint64 {
	out := make(map[string]uint64, len(lines))
	for _, l := range lines {
		out[l.key] = l.value
	}
	return out
}

// Meminfo is the partition's /proc/meminfo: the host's lines in the
// host's order, each per-node figure the sum over nodes (the partition's
// nodes' meminfo), and of the others:
//   - Buffers 0 and Cached the nodes' FilePages less their SwapCached (a
//     node counts buffers inside FilePages);
//   - MemAvailable the kernel's estimate (free, page cache and reclaimable
//     slab, less what the kernel holds back) for the nodes: the host's
//     held-back part (its free + page cache + reclaimable − MemAvailable)
//     shared by MemTotal, as the watermarks behind it are;
//   - the host-wide lines (swap, commit, vmalloc, page size, direct map)
//     as the host's.
func Meminfo(host []byte, nodes []numa.NodeMeminfo) ([]byte, error) {
	lines, err := parseHostMeminfo(host)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no NUMA node's meminfo")
	}
	sum := sumNodes(nodes)
	hostVal := valuesOf(lines)
	var out bytes.Buffer
	for _, l := range lines {
		v := l.value
		switch {
		case nodeKeys[l.key]:
			v = sum[l.key]
		case l.key == "Buffers":
			v = 0
		case l.key == "Cached":
			v = sub(sum["FilePages"], sum["SwapCached"])
		case l.key == "MemAvailable":
			v = available(sum, hostVal)
		}
		if l.kB {
			fmt.Fprintf(&out, "%-16s%8d kB\n", l.key+":", v>>10)
		} else {
			fmt.Fprintf(&out, "%-16s%8d\n", l.key+":", v)
		}
	}
	return out.Bytes(), nil
}

// available estimates MemAvailable for the nodes summed in n; host holds
// the host's /proc/meminfo values (bytes).
func available(n numa.NodeMeminfo, host map[string]uint64) uint64 {
	reclaimable := func(m map[string]uint64) uint64 {
		return m["MemFree"] + m["Active(file)"] + m["Inactive(file)"] + m["KReclaimable"]
	}
	heldBack := sub(reclaimable(host), host["MemAvailable"])
	share := uint64(0)
	if total := host["MemTotal"]; total > 0 {
		// heldBack × n's MemTotal / host's MemTotal, without overflow:
		// both sizes are below 2^53 (parseHostMeminfo), the share ≤ 1.
		share = uint64(float64(heldBack) * (float64(n["MemTotal"]) / float64(total)))
	}
	return min(sub(reclaimable(n), share), n["MemTotal"])
}

func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}
