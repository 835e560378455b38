// Package numa models a host's NUMA topology as read from sysfs: sockets →
// NUMA nodes → cores → CPUs, per-node memory and hugepages, node distances
// and PCI devices' locality. Discovery (FS, Discover) is the only part that
// reads the machine; the model itself is plain data that planning and the
// allocator consume as pure input.
//
// The JSON form of Topology is the stable output of `numa-partition discover
// --output json` and is documented in docs/discover.md.
//
// Sockets, nodes and cores hold online CPUs only: an offline CPU cannot be
// put in a cpuset, so planning must not see it. Offline CPUs keep whatever
// the kernel says about them in Topology.CPUs.
package numa

import (
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// Topology is one machine.
type Topology struct {
	Sockets []Socket    `json:"sockets"`
	Nodes   []Node      `json:"nodes"` // ascending by ID
	CPUs    []CPU       `json:"cpus"`  // ascending by ID; every present CPU
	PCI     []PCIDevice `json:"pciDevices"`

	Online   bitmask.CPUSet `json:"online"`
	Offline  bitmask.CPUSet `json:"offline"`
	Possible bitmask.CPUSet `json:"possible"`
	Present  bitmask.CPUSet `json:"present"`

	// Warnings say where discovery had to assume something (no node/
	// directory, a dump edited by hand, ...). Never silent.
	Warnings []string `json:"warnings"`
}

// Socket is a physical package. ID is the kernel's physical_package_id,
// which is not 0..N-1 on every machine (36/8442 on Kunpeng). Where sysfs
// has no usable id (-1 on PowerVM, s390, SPARC; absent on old kernels)
// ID is lscpu's logical socket: distinct core_siblings masks numbered
// 0..N-1 in the order of their lowest CPU.
type Socket struct {
	ID    int             `json:"id"`
	Nodes bitmask.NodeSet `json:"nodes"` // NUMA nodes holding this socket's CPUs
	CPUs  bitmask.CPUSet  `json:"cpus"`  // online CPUs
	Cores []Core          `json:"cores"` // ascending by lowest CPU
}

// Core is a group of online SMT siblings (thread_siblings_list). CoreID is
// the kernel's core_id of its lowest CPU, which is not unique per socket on
// every machine. Node is -1 when no node lists the core's CPUs.
type Core struct {
	CoreID int            `json:"coreId"`
	Socket int            `json:"socket"`
	Node   int            `json:"node"`
	CPUs   bitmask.CPUSet `json:"cpus"`
}

// NodeKind says what a NUMA node holds.
type NodeKind string

// Node kinds. CPU-less nodes (memory-only, GPU memory, CXL) are kept.
const (
	NodeCPUAndMemory NodeKind = "cpu+memory"
	NodeMemoryOnly   NodeKind = "memory-only"
	NodeCPUOnly      NodeKind = "cpu-only"
	NodeEmpty        NodeKind = "empty"
)

// Node is one NUMA node. CPUs are its online CPUs, each CPU in exactly one
// node; Kind follows from CPUs and MemoryBytes.
type Node struct {
	ID          int            `json:"id"`
	Kind        NodeKind       `json:"kind"`
	CPUs        bitmask.CPUSet `json:"cpus"`
	MemoryBytes uint64         `json:"memoryBytes"` // MemTotal of node meminfo
	FreeBytes   uint64         `json:"freeBytes"`   // MemFree of node meminfo
	Hugepages   []Hugepages    `json:"hugepages"`   // ascending by page size
	// Distances to every node of Topology.Nodes, in the same order:
	// Distances[i] is the distance to Topology.Nodes[i].
	Distances []int `json:"distances"`
}

// Hugepages is one page size on one node.
type Hugepages struct {
	PageSize uint64 `json:"pageSize"` // bytes
	Total    uint64 `json:"total"`    // pages (nr_hugepages)
	Free     uint64 `json:"free"`
	Surplus  uint64 `json:"surplus"`
}

// CPU is one logical CPU. Offline CPUs have no topology files: their Core
// and Socket are -1, and Node is -1 unless a node's cpulist names them.
type CPU struct {
	ID     int  `json:"id"`
	Core   int  `json:"core"`   // core_id (lscpu's logical core when absent)
	Socket int  `json:"socket"` // physical_package_id (lscpu's logical socket when absent or -1)
	Node   int  `json:"node"`
	Online bool `json:"online"`
}

// PCIDevice is a PCI function and its NUMA locality; Node is -1 when the
// firmware does not say (most devices on most machines). Class, Vendor and
// Device are the kernel's hex strings ("0x020000"), empty when the sysfs
// tree lacks the file (dumps often keep numa_node only).
type PCIDevice struct {
	Address string `json:"address"` // 0000:3b:00.0
	Class   string `json:"class"`   // PCI class code, e.g. 0x020000 Ethernet
	Vendor  string `json:"vendor"`
	Device  string `json:"device"`
	Node    int    `json:"node"`
	// PhysFn is the address of the physical function an SR-IOV virtual
	// function belongs to (its physfn link); "" for any other function.
	PhysFn string `json:"physfn,omitempty"`
	// Net are the function's network interfaces (net/<name>), as named
	// in the namespace that discovery reads sysfs from: usually one, none
	// for a function without a netdev driver (or bound to vfio-pci).
	Net []NetDevice `json:"net,omitempty"`
}

// NetDevice is a network interface of a PCI function.
type NetDevice struct {
	Name string `json:"name"`
	// Master is the interface it is a port of (a bridge, bond or OVS
	// datapath: its master link), "" when none.
	Master string `json:"master,omitempty"`
}

// Node returns the node with the given id.
func (t *Topology) Node(id int) (*Node, bool) {
	for i := range t.Nodes {
		if t.Nodes[i].ID == id {
			return &t.Nodes[i], true
		}
	}
	return nil, false
}

// NodeIDs returns every node id as a set.
func (t *Topology) NodeIDs() bitmask.NodeSet {
	var s bitmask.NodeSet
	for _, n := range t.Nodes {
		s = s.Add(n.ID)
	}
	return s
}

// Distance returns the distance from node a to node b, false when unknown.
func (t *Topology) Distance(a, b int) (int, bool) {
	na, ok := t.Node(a)
	if !ok {
		return 0, false
	}
	for i := range t.Nodes {
		if t.Nodes[i].ID == b && i < len(na.Distances) {
			return na.Distances[i], true
		}
	}
	return 0, false
}
