// Package numatest writes synthetic sysfs trees of machines no fixture
// under testdata/sysfs holds: today's largest shapes, for the tests and
// benchmarks of discovery, planning, rendering, apply and the allocator
// (issue #41, "Big hosts"). A tree is generated at test time into a
// temporary directory, with the files and formats a current kernel
// writes (devices/system/cpu and devices/system/node: lists and masks,
// topology ids and sibling lists, a node's full meminfo, hugepage pools,
// the distance matrix), so that discovery reads it as it reads a live
// /sys. Only the real dumps under testdata/sysfs are evidence of what
// firmware does; these shapes are regular by construction.
//
// CPUs are numbered as Linux numbers them on x86 and arm64 servers: the
// first thread of every core, socket after socket, then the second
// threads in the same order. A socket's cores are split over its NUMA
// nodes in order, as evenly as they go (the first nodes get one more
// when they do not divide: 128 cores in SNC3 are 43, 43 and 42).
package numatest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

const (
	mib = uint64(1) << 20
	gib = uint64(1) << 30
)

// Shape is a synthetic machine: CPU nodes (sockets × nodes per socket),
// then CPU-less memory nodes.
type Shape struct {
	// Name is the benchmark's sub-name; About says what machine it stands for.
	Name, About string

	Sockets, NodesPerSocket, CoresPerSocket, ThreadsPerCore int
	// NodeMemory is each CPU node's memory.
	NodeMemory uint64

	// MemoryNodes are CPU-less nodes numbered after the CPU nodes; each
	// belongs to CPU node (k × CPU nodes / MemoryNodes), the one it is
	// nearest to. MemoryNodeMemory is the memory of each.
	MemoryNodes      int
	MemoryNodeMemory uint64
	// EmptyEvery, when above 1, leaves all but the first of every
	// EmptyEvery memory nodes empty (0 bytes), as a GPU driver reserves
	// 8 nodes per GPU and onlines its memory in the first one only.
	EmptyEvery int

	// Distances, SLIT values: between CPU nodes of one socket, of two
	// sockets; from a memory node to its CPU node and to any other node.
	SameSocket, OtherSocket, MemoryNear, MemoryFar int

	// PageSizes are the hugepage sizes every node offers, ascending.
	PageSizes []uint64

	// Config is the TOML the benchmarks plan the shape with.
	Config string
	// Cgroup is the host's cgroup mode, a host fact the tests give the
	// planner (planner.FixedFacts) and apply: v2 on today's big hosts,
	// and nri mode (the GB200 tray's partitions) needs it.
	Cgroup cgroupmode.Mode
}

// The shapes of issue #41: the 2-socket, 512-thread hosts in their
// finest NUMA modes and a GB200-like tray, benchmarked from discovery
// to apply.
var (
	// SNC3 is a 2-socket Xeon 6 (Granite Rapids, 128 cores, SMT2) in
	// sub-NUMA clustering 3: 6 nodes of 43, 43 and 42 cores, 256 GiB
	// each (12 channels of 64 GiB a socket). One partition per node.
	SNC3 = Shape{
		Name: "2s512t-snc3", About: "2 × 128 cores × 2 threads, SNC3: 6 nodes",
		Sockets: 2, NodesPerSocket: 3, CoresPerSocket: 128, ThreadsPerCore: 2,
		NodeMemory: 256 * gib, SameSocket: 12, OtherSocket: 21,
		PageSizes: []uint64{2 * mib, gib}, Cgroup: cgroupmode.V2,
		Config: x86Config("snc3"),
	}
	// NPS4 is a 2-socket EPYC (Turin, 128 cores, SMT2) in NPS4: 8 nodes
	// of 32 cores, 192 GiB each. One partition per node.
	NPS4 = Shape{
		Name: "2s512t-nps4", About: "2 × 128 cores × 2 threads, NPS4: 8 nodes",
		Sockets: 2, NodesPerSocket: 4, CoresPerSocket: 128, ThreadsPerCore: 2,
		NodeMemory: 192 * gib, SameSocket: 12, OtherSocket: 32,
		PageSizes: []uint64{2 * mib, gib}, Cgroup: cgroupmode.V2,
		Config: x86Config("nps4"),
	}
	// GB200 is a GB200 NVL72 compute tray: 2 Grace CPUs (72 Neoverse V2
	// cores, no SMT, 480 GiB LPDDR5X each) and 4 Blackwell GPUs whose
	// HBM the driver exposes as 8 CPU-less NUMA nodes each: 34 nodes,
	// 32 of them memory-only. Here every GPU node holds memory (23 GiB,
	// an eighth of a GPU's HBM, as with MIG slices onlined); GPUs 0-1
	// hang off Grace 0, 2-3 off Grace 1. Pages of a 64 KiB-page arm64
	// kernel. One partition per Grace, each with its 16 GPU nodes, so
	// both are placed by the allocator (nri mode above 8 nodes).
	GB200 = Shape{
		Name: "gb200-34n", About: "GB200 tray: 2 Grace × 72 cores + 32 GPU-memory nodes",
		Sockets: 2, NodesPerSocket: 1, CoresPerSocket: 72, ThreadsPerCore: 1,
		NodeMemory: 480 * gib, MemoryNodes: 32, MemoryNodeMemory: 23 * gib,
		OtherSocket: 40, MemoryNear: 80, MemoryFar: 120,
		PageSizes: []uint64{2 * mib, 512 * mib, 16 * gib}, Cgroup: cgroupmode.V2,
		Config: `[kubelet]
hostname = "gb200"

[[host.hugepages]]
size = "512Mi"
count = 64
`,
	}
	// GB200MIGOff is the same tray with the GPUs' memory in one node
	// each and the driver's 7 other nodes per GPU empty: what
	// discovery and the plan make of 28 empty nodes.
	GB200MIGOff = func() Shape {
		s := GB200
		s.Name, s.About = "gb200-34n-mig-off", "GB200 tray, 4 GPU-memory nodes of 186 GiB and 28 empty ones"
		s.MemoryNodeMemory, s.EmptyEvery = 186*gib, 8
		return s
	}()

	// BigHosts are the shapes benchmarked from discovery to apply.
	BigHosts = []Shape{SNC3, NPS4, GB200}
)

func x86Config(hostname string) string {
	return fmt.Sprintf(`[partitioning]
mode = "node"

[kubelet]
hostname = %q

[[host.hugepages]]
size = "1Gi"
count = 16
`, hostname)
}

// AllocatorShape is a machine whose one partition spans nodes NUMA nodes,
// for the allocator daemon's admission at that size (issue #41: 16, 34
// and 64): 16 is a 4-socket Xeon (Sapphire Rapids, 60 cores, SMT2) in
// SNC4, 34 the GB200 tray, 64 a 32-socket Superdome-Flex-like host
// (28 cores, SMT2) in SNC2. Its Config plans every node into one
// partition, "all".
func AllocatorShape(nodes int) (Shape, error) {
	var s Shape
	switch nodes {
	case 16:
		s = Shape{Name: "4s-snc4-16n", About: "4 × 60 cores × 2 threads, SNC4: 16 nodes",
			Sockets: 4, NodesPerSocket: 4, CoresPerSocket: 60, ThreadsPerCore: 2,
			NodeMemory: 128 * gib, SameSocket: 12, OtherSocket: 21, PageSizes: []uint64{2 * mib, gib}, Cgroup: cgroupmode.V2}
	case 34:
		s = GB200
		s.Name, s.About = "gb200-34n-1p", "GB200 tray as one partition: 2 Grace × 72 cores + 32 GPU-memory nodes"
	case 64:
		s = Shape{Name: "32s-snc2-64n", About: "32 × 28 cores × 2 threads, SNC2: 64 nodes",
			Sockets: 32, NodesPerSocket: 2, CoresPerSocket: 28, ThreadsPerCore: 2,
			NodeMemory: 192 * gib, SameSocket: 11, OtherSocket: 31, PageSizes: []uint64{2 * mib, gib}, Cgroup: cgroupmode.V2}
	default:
		return s, fmt.Errorf("no allocator shape of %d nodes (16, 34 or 64)", nodes)
	}
	var groups []string
	for id := range s.Sockets * s.NodesPerSocket {
		groups = append(groups, strconv.Itoa(id))
	}
	s.Config = fmt.Sprintf(`[partitioning]
mode = "custom"
groups = [[%s]]

[kubelet]
hostname = %q

[[partition]]
nodes = [%s]
name = "all"
`, strings.Join(groups, ", "), s.Name, strings.Join(groups, ", "))
	return s, nil
}

// CPUNodes is the number of nodes with CPUs; Nodes every node's.
func (s Shape) CPUNodes() int { return s.Sockets * s.NodesPerSocket }

// Nodes is the number of NUMA nodes, CPU-less ones included.
func (s Shape) Nodes() int { return s.CPUNodes() + s.MemoryNodes }

// CPUs is the number of logical CPUs.
func (s Shape) CPUs() int { return s.Sockets * s.CoresPerSocket * s.threads() }

func (s Shape) threads() int { return max(s.ThreadsPerCore, 1) }

// nodeCores is the number of cores of node n of a socket.
func (s Shape) nodeCores(n int) int {
	c := s.CoresPerSocket / s.NodesPerSocket
	if n < s.CoresPerSocket%s.NodesPerSocket {
		c++
	}
	return c
}

// memory is node id's memory.
func (s Shape) memory(id int) uint64 {
	if id < s.CPUNodes() {
		return s.NodeMemory
	}
	if k := id - s.CPUNodes(); s.EmptyEvery > 1 && k%s.EmptyEvery != 0 {
		return 0
	}
	return s.MemoryNodeMemory
}

// owner is the CPU node a memory node belongs to.
func (s Shape) owner(id int) int { return (id - s.CPUNodes()) * s.CPUNodes() / s.MemoryNodes }

func (s Shape) distance(a, b int) int {
	cpuNodes := s.CPUNodes()
	switch {
	case a == b:
		return 10
	case a < cpuNodes && b < cpuNodes:
		if a/s.NodesPerSocket == b/s.NodesPerSocket {
			return s.SameSocket
		}
		return s.OtherSocket
	case a >= cpuNodes && b >= cpuNodes:
		return s.MemoryFar
	}
	mem, cpu := a, b
	if a < cpuNodes {
		mem, cpu = b, a
	}
	if s.owner(mem) == cpu {
		return s.MemoryNear
	}
	return s.MemoryFar
}

// Write writes the shape's sysfs tree under root (root/devices/system/...):
// what numa.NewFS(root).Discover reads.
func (s Shape) Write(root string) error {
	if s.Sockets < 1 || s.NodesPerSocket < 1 || s.CoresPerSocket < s.NodesPerSocket {
		return fmt.Errorf("shape %s: %d sockets × %d nodes × %d cores is not a machine", s.Name, s.Sockets, s.NodesPerSocket, s.CoresPerSocket)
	}
	if s.MemoryNodes > 0 && (s.MemoryNear <= 10 || s.MemoryFar <= 10) {
		return fmt.Errorf("shape %s: memory nodes need distances above 10", s.Name)
	}
	w := writer{root: root}
	threads, cores := s.threads(), s.Sockets*s.CoresPerSocket
	all := bitmask.NewCPUSet()
	if n := s.CPUs(); n > 0 {
		all = bitmask.MustParseCPUList("0-" + strconv.Itoa(n-1))
	}
	cpu := "devices/system/cpu/"
	w.file(cpu+"kernel_max", "8191")
	for _, f := range []string{"online", "possible", "present"} {
		w.file(cpu+f, all.String())
	}
	w.file(cpu+"offline", "")

	nodeCPUs := make([]bitmask.CPUSet, s.Nodes())
	for sock := range s.Sockets {
		var sockCPUs []int
		for t := range threads {
			for c := range s.CoresPerSocket {
				sockCPUs = append(sockCPUs, t*cores+sock*s.CoresPerSocket+c)
			}
		}
		pkg := bitmask.NewCPUSet(sockCPUs...)
		core := 0
		for n := range s.NodesPerSocket {
			node := sock*s.NodesPerSocket + n
			var ids []int
			for range s.nodeCores(n) {
				var siblings []int
				for t := range threads {
					siblings = append(siblings, t*cores+sock*s.CoresPerSocket+core)
				}
				sib := bitmask.NewCPUSet(siblings...)
				// What discovery reads of a CPU, as a kernel writes it; not
				// cpuN/online nor die_id, which it does not read (the
				// machine's cpu/online lists every CPU).
				for _, id := range siblings {
					dir := fmt.Sprintf("%scpu%d/", cpu, id)
					for _, f := range [][2]string{
						{"physical_package_id", strconv.Itoa(sock)}, {"core_id", strconv.Itoa(core)},
						{"thread_siblings_list", sib.String()}, {"thread_siblings", sib.Mask()},
						{"core_siblings_list", pkg.String()}, {"core_siblings", pkg.Mask()},
					} {
						w.file(dir+"topology/"+f[0], f[1])
					}
				}
				ids = append(ids, siblings...)
				core++
			}
			nodeCPUs[node] = bitmask.NewCPUSet(ids...)
		}
	}

	nodeDir := "devices/system/node/"
	var nodes, withCPU, withMemory bitmask.NodeSet
	for id := range s.Nodes() {
		nodes = nodes.Add(id)
		if id < s.CPUNodes() {
			withCPU = withCPU.Add(id)
		}
		if s.memory(id) > 0 {
			withMemory = withMemory.Add(id)
		}
	}
	w.file(nodeDir+"online", nodes.String())
	w.file(nodeDir+"possible", nodes.String())
	w.file(nodeDir+"has_cpu", withCPU.String())
	w.file(nodeDir+"has_memory", withMemory.String())
	w.file(nodeDir+"has_normal_memory", withMemory.String())
	for id := range s.Nodes() {
		dir := fmt.Sprintf("%snode%d/", nodeDir, id)
		w.file(dir+"cpulist", nodeCPUs[id].String())
		w.file(dir+"cpumap", nodeCPUs[id].Mask())
		d := make([]string, s.Nodes())
		for j := range d {
			d[j] = strconv.Itoa(s.distance(id, j))
		}
		w.file(dir+"distance", strings.Join(d, " "))
		w.file(dir+"meminfo", meminfo(id, s.memory(id)))
		for _, ps := range s.PageSizes {
			pool := fmt.Sprintf("%shugepages/hugepages-%dkB/", dir, ps>>10)
			for _, f := range []string{"nr_hugepages", "free_hugepages", "surplus_hugepages"} {
				w.file(pool+f, "0")
			}
		}
	}
	return w.err
}

// WriteTemp writes the shape's tree into a new temporary directory,
// removed when tb's test ends, and returns it. The directory is on
// /dev/shm when that is writable (a tmpfs on Linux): sysfs is in memory too, and a
// tree of 5,000 files costs seconds to create on a busy disk and a tenth
// of that in memory.
func (s Shape) WriteTemp(tb testing.TB) string {
	tb.Helper()
	root, err := os.MkdirTemp(shmDir, "numatest-")
	if err != nil {
		root = tb.TempDir()
	} else {
		tb.Cleanup(func() { _ = os.RemoveAll(root) })
	}
	if err := s.Write(root); err != nil {
		tb.Fatal(err)
	}
	return root
}

// shmDir is where WriteTemp writes first.
const shmDir = "/dev/shm"

// meminfo is a node's meminfo as a 6.x kernel writes it, for a node
// with total bytes of which a twentieth is in use.
func meminfo(id int, total uint64) string {
	kb := total >> 10
	used := kb / 20
	var b strings.Builder
	for _, l := range []struct {
		key   string
		value uint64
	}{
		{"MemTotal", kb}, {"MemFree", kb - used}, {"MemUsed", used}, {"SwapCached", 0},
		{"Active", used / 2}, {"Inactive", used / 4}, {"Active(anon)", used / 4}, {"Inactive(anon)", 0},
		{"Active(file)", used / 4}, {"Inactive(file)", used / 4}, {"Unevictable", 0}, {"Mlocked", 0},
		{"Dirty", 0}, {"Writeback", 0}, {"FilePages", used / 2}, {"Mapped", used / 16}, {"AnonPages", used / 4},
		{"Shmem", 0}, {"KernelStack", used / 64}, {"PageTables", used / 64}, {"SecPageTables", 0},
		{"NFS_Unstable", 0}, {"Bounce", 0}, {"WritebackTmp", 0}, {"KReclaimable", used / 16},
		{"Slab", used / 8}, {"SReclaimable", used / 16}, {"SUnreclaim", used / 16}, {"AnonHugePages", 0},
		{"ShmemHugePages", 0}, {"ShmemPmdMapped", 0}, {"FileHugePages", 0}, {"FilePmdMapped", 0}, {"Unaccepted", 0},
	} {
		fmt.Fprintf(&b, "Node %d %-15s %10d kB\n", id, l.key+":", l.value)
	}
	for _, key := range []string{"HugePages_Total", "HugePages_Free", "HugePages_Surp"} {
		fmt.Fprintf(&b, "Node %d %-15s %5d\n", id, key+":", 0)
	}
	return b.String()
}

// writer writes files under root, creating directories, and keeps the
// first error.
type writer struct {
	root string
	dirs map[string]bool // made
	err  error
}

func (w *writer) file(name, content string) {
	if w.err != nil {
		return
	}
	path := filepath.Join(w.root, name)
	if dir := filepath.Dir(path); !w.dirs[dir] {
		if w.err = os.MkdirAll(dir, 0o755); w.err != nil {
			return
		}
		if w.dirs == nil {
			w.dirs = map[string]bool{}
		}
		w.dirs[dir] = true
	}
	w.err = os.WriteFile(path, []byte(content+"\n"), 0o644)
}
