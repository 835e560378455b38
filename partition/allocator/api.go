// Package allocator is the per-partition memory allocator: kubelet's Memory
// Manager static policy (one MemoryTable per NUMA node and resource) driven by
// the Topology Manager policies and scopes, with kubelet 1.37's observable
// decisions (see docs/allocator.md). It is a pure state machine: no I/O, not
// safe for concurrent use (the daemon serialises calls), deterministic.
package allocator

import (
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"k8s.io/apimachinery/pkg/types"
)

// ResourceName is "memory" or a hugepage resource ("hugepages-2Mi",
// units.HugepageResource).
type ResourceName string

// ResourceMemory is ordinary memory.
const ResourceMemory ResourceName = "memory"

// NodeResources is one NUMA node of the partition.
type NodeResources struct {
	ID        int                     `json:"id"`
	Memory    uint64                  `json:"memory"`    // node MemTotal bytes
	Hugepages map[uint64]uint64       `json:"hugepages"` // page size bytes -> total bytes (pages*size)
	Reserved  map[ResourceName]uint64 `json:"reserved"`  // systemReserved per resource
}

// Config describes a partition and its kubelet Topology/Memory Manager settings.
type Config struct {
	Nodes                 []NodeResources     `json:"nodes"`
	Distances             map[int]map[int]int `json:"distances,omitempty"` // needed for prefer-closest
	Policy                string              `json:"policy"`              // none | best-effort | restricted | single-numa-node
	Scope                 string              `json:"scope"`               // container | pod
	PreferClosestNUMA     bool                `json:"preferClosestNUMANodes"`
	MaxAllowableNUMANodes int                 `json:"maxAllowableNUMANodes"` // 0 = kubelet default 8
	TieBreak              string              `json:"tieBreak"`              // "" or pack (kubelet) | spread
	KubeVirtOverhead      string              `json:"kubevirtOverhead"`      // "current" (default) | "v0.26"
}

// Decision is the outcome of one admission.
type Decision struct {
	PodUID     types.UID           `json:"podUID"`
	Pod        string              `json:"pod"` // namespace/name
	Admitted   bool                `json:"admitted"`
	Pinned     bool                `json:"pinned"` // Guaranteed QoS -> memory pinned
	Reason     string              `json:"reason,omitempty"`
	Containers []ContainerDecision `json:"containers,omitempty"`
}

// ContainerDecision is one container's NUMA nodes and pinned memory.
type ContainerDecision struct {
	Name      string                  `json:"name"`
	NUMANodes bitmask.NodeSet         `json:"numaNodes"`
	Memory    map[ResourceName]uint64 `json:"memory"`
}

// Allocation is an admitted decision kept in state.
type Allocation = Decision

// MemoryTable is one per (NUMA node, resource). Invariants after every
// operation: Allocatable = TotalMemSize - SystemReserved; Free + Reserved = Allocatable.
type MemoryTable struct {
	TotalMemSize   uint64 `json:"total"`
	SystemReserved uint64 `json:"systemReserved"`
	Allocatable    uint64 `json:"allocatable"`
	Reserved       uint64 `json:"reserved"`
	Free           uint64 `json:"free"`
}

// NodeState is the Memory Manager's per-node state.
type NodeState struct {
	NumberOfAssignments int                          `json:"numberOfAssignments"`
	MemoryMap           map[ResourceName]MemoryTable `json:"memoryMap"`
	Cells               []int                        `json:"cells"` // group of nodes
}

// State is the checkpointable state of an allocator.
type State struct {
	Machine     map[int]NodeState `json:"machine"`     // by node id
	Allocations []Allocation      `json:"allocations"` // sorted by pod UID
}
