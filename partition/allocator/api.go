// Package allocator is the per-partition memory allocator: kubelet's Memory
// Manager static policy (one MemoryTable per NUMA node and resource) driven by
// the Topology Manager policies and scopes, with kubelet 1.37's observable
// decisions (see docs/allocator.md). It is a pure state machine: no I/O, not
// safe for concurrent use (the daemon serialises calls), deterministic.
package allocator

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/policy/memorymanager"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// ResourceName is "memory" or a hugepage resource ("hugepages-2Mi",
// units.HugepageResource).
type ResourceName = memorymanager.ResourceName

// ResourceMemory is ordinary memory.
const ResourceMemory = memorymanager.ResourceMemory

// NodeResources is one NUMA node of the partition.
type NodeResources = memorymanager.NodeResources

// Config describes a partition and its kubelet Topology/Memory Manager settings.
type Config struct {
	Nodes     []NodeResources     `json:"nodes"`
	Distances map[int]map[int]int `json:"distances,omitempty"` // needed for prefer-closest
	Policy    string              `json:"policy"`              // none | best-effort | restricted | single-numa-node
	Scope     string              `json:"scope"`               // container | pod
	// The kubelet's topologyManagerPolicyOptions, typed. Embedded, so
	// that their fields stay this object's (preferClosestNUMANodes,
	// maxAllowableNUMANodes in --allocator-config and simulate's report).
	topologymanager.PolicyOptions
	TieBreak         string `json:"tieBreak"`         // "" or pack (kubelet) | spread
	KubeVirtOverhead string `json:"kubevirtOverhead"` // "current" (default) | "v0.26"
	// KubeVirtOverheadRatio is the KubeVirt CR's
	// additionalGuestMemoryOverheadRatio ("" = unset, else ≥ 1), and
	// KubeVirtDefaultArchitecture the architecture of VMIs that name
	// none ("" = amd64): both change the launcher pod's overhead.
	KubeVirtOverheadRatio       string `json:"kubevirtOverheadRatio,omitempty"`
	KubeVirtDefaultArchitecture string `json:"kubevirtDefaultArchitecture,omitempty"`
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
// operation: Allocatable = TotalMemSize - SystemReserved (for "memory",
// also less the node's hugepage pools: kubelet's layout, TotalMemSize is
// MemTotal); Free + Reserved = Allocatable.
type MemoryTable = memorymanager.MemoryTable

// NodeState is the Memory Manager's per-node state.
type NodeState = memorymanager.NodeState

// Block is one container's pinned memory of one resource.
type Block = memorymanager.Block

// State is the checkpointable state of an allocator.
type State struct {
	Machine     map[int]NodeState `json:"machine"`     // by node id
	Allocations []Allocation      `json:"allocations"` // sorted by pod UID
	// Blocks are the pinned containers' memory blocks by pod and container,
	// what Restore needs to rebuild the Node Map exactly.
	Blocks map[types.UID]map[string][]Block `json:"blocks,omitempty"`
}

// Find is the index of pod uid's allocation in s.Allocations, or where it
// would be inserted, and whether it is there.
func (s State) Find(uid types.UID) (int, bool) {
	return slices.BinarySearchFunc(s.Allocations, uid, func(a Allocation, u types.UID) int { return strings.Compare(string(a.PodUID), string(u)) })
}
