// Package memorymanager is kubelet's Memory Manager static policy for one
// partition: the Node Map (one MemoryTable per NUMA node and resource),
// topology hints, allocation filling nodes in ascending order, init
// container memory reuse and release (semantics M1-M12 in docs/allocator.md).
package memorymanager

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"

	"github.com/numa-partition/numa-partition/numa/units"
)

// MaxBytes is the most memory a node may have, and one quantity ask
// for: 4 PiB, all that 52-bit physical addresses (x86-64's and arm64's
// widest) reach. Every sum of a node's memory and hugepages then fits
// 64 bits (#38: simulate took nodes of 8 Ei).
const MaxBytes = uint64(1) << 52

// minPageSize is the smallest page any kernel has.
const minPageSize = 4 << 10

// ResourceName is "memory" or "hugepages-<size>".
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

// MemoryTable is one per (NUMA node, resource), laid out as in kubelet's
// memory_manager_state: for "memory" TotalMemSize is the node's MemTotal,
// hugepage pools included, and Allocatable = TotalMemSize - SystemReserved
// - the node's hugepage pools; for a hugepage size Allocatable =
// TotalMemSize - SystemReserved. Free + Reserved = Allocatable always.
type MemoryTable struct {
	TotalMemSize   uint64 `json:"total"`
	SystemReserved uint64 `json:"systemReserved"`
	Allocatable    uint64 `json:"allocatable"`
	Reserved       uint64 `json:"reserved"`
	Free           uint64 `json:"free"`
}

// NodeState is one node of the Node Map.
type NodeState struct {
	NumberOfAssignments int                          `json:"numberOfAssignments"`
	MemoryMap           map[ResourceName]MemoryTable `json:"memoryMap"`
	Cells               []int                        `json:"cells"` // the group of nodes this node belongs to
}

// Block is one container's pinned memory of one resource.
type Block struct {
	NUMAAffinity []int        `json:"numaAffinity"`
	Type         ResourceName `json:"type"`
	Size         uint64       `json:"size"`
}

// machine is the Node Map in dense form: node i of the slices is the i-th
// smallest id; masks are uint64 with bit i = node i.
type machine struct {
	ids         []int
	resources   []ResourceName // sorted; index r in tables
	tables      [][]MemoryTable
	assignments []int
	cells       []uint64
}

func (m *machine) resourceIndex(r ResourceName) (int, bool) {
	i, ok := slices.BinarySearch(m.resources, r)
	return i, ok
}

func (m *machine) clone() *machine {
	c := &machine{ids: m.ids, resources: m.resources,
		assignments: slices.Clone(m.assignments), cells: slices.Clone(m.cells)}
	c.tables = make([][]MemoryTable, len(m.tables))
	for i := range m.tables {
		c.tables[i] = slices.Clone(m.tables[i])
	}
	return c
}

// newMachine builds the initial Node Map (M1), refusing reservations that
// exceed a node's capacity (kubelet underflows there).
func newMachine(nodes []NodeResources) (*machine, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no NUMA nodes")
	}
	if len(nodes) > 64 {
		return nil, fmt.Errorf("%d NUMA nodes: at most 64 are supported in one partition", len(nodes))
	}
	sorted := slices.Clone(nodes)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	m := &machine{}
	resSet := map[ResourceName]bool{ResourceMemory: true}
	for i, n := range sorted {
		if n.ID < 0 || n.ID >= 1024 {
			return nil, fmt.Errorf("nodes[%d]: NUMA node id %d out of range 0..1023", i, n.ID)
		}
		if i > 0 && sorted[i-1].ID == n.ID {
			return nil, fmt.Errorf("NUMA node %d listed twice", n.ID)
		}
		m.ids = append(m.ids, n.ID)
		if n.Memory > MaxBytes {
			return nil, fmt.Errorf("node %d: memory %s: at most %s, all that 52-bit physical addresses reach", n.ID, units.FormatBytes(n.Memory), units.FormatBytes(MaxBytes))
		}
		for size, total := range n.Hugepages {
			if size < minPageSize || size&(size-1) != 0 {
				return nil, fmt.Errorf("node %d: hugepages of %s: a page size is a power of two of at least 4Ki", n.ID, units.FormatBytes(size))
			}
			if total%size != 0 {
				return nil, fmt.Errorf("node %d: hugepages of %d bytes: total %d is not a whole number of pages", n.ID, size, total)
			}
			resSet[ResourceName(units.HugepageResource(size))] = true
		}
	}
	for _, n := range sorted {
		for r := range n.Reserved {
			if !resSet[r] {
				return nil, fmt.Errorf("node %d: reserved %q: no such resource on this partition (allowed: memory and its hugepage sizes)", n.ID, r)
			}
		}
	}
	for r := range resSet {
		m.resources = append(m.resources, r)
	}
	slices.Sort(m.resources)
	for _, n := range sorted {
		hpTotal := uint64(0)
		byRes := map[ResourceName]uint64{}
		for size, total := range n.Hugepages {
			byRes[ResourceName(units.HugepageResource(size))] = total
			hpTotal += total
		}
		if hpTotal > n.Memory {
			return nil, fmt.Errorf("node %d: hugepage pools (%s) exceed the node's memory (%s)", n.ID, units.FormatBytes(hpTotal), units.FormatBytes(n.Memory))
		}
		byRes[ResourceMemory] = n.Memory - hpTotal // what is left to reserve and allocate
		row := make([]MemoryTable, len(m.resources))
		for ri, r := range m.resources {
			avail, reserved := byRes[r], n.Reserved[r]
			if reserved > avail {
				return nil, fmt.Errorf("node %d: reserved %s of %s exceeds its %s", n.ID, units.FormatBytes(reserved), r, units.FormatBytes(avail))
			}
			total := avail
			if r == ResourceMemory {
				total = n.Memory // kubelet's getDefaultMachineState reports MemTotal
			}
			row[ri] = MemoryTable{TotalMemSize: total, SystemReserved: reserved, Allocatable: avail - reserved, Free: avail - reserved}
		}
		m.tables = append(m.tables, row)
		m.assignments = append(m.assignments, 0)
		m.cells = append(m.cells, 1<<(len(m.cells)))
	}
	return m, nil
}

// export returns the Node Map keyed by node id.
func (m *machine) export() map[int]NodeState {
	out := make(map[int]NodeState, len(m.ids))
	for i, id := range m.ids {
		mm := make(map[ResourceName]MemoryTable, len(m.resources))
		for ri, r := range m.resources {
			mm[r] = m.tables[i][ri]
		}
		out[id] = NodeState{NumberOfAssignments: m.assignments[i], MemoryMap: mm, Cells: m.idsOf(m.cells[i])}
	}
	return out
}

func (m *machine) idsOf(mask uint64) []int {
	out := make([]int, 0, bits.OnesCount64(mask))
	for x := mask; x != 0; x &= x - 1 {
		out = append(out, m.ids[bits.TrailingZeros64(x)])
	}
	return out
}

func (m *machine) maskOf(ids []int) (uint64, error) {
	var mask uint64
	for _, id := range ids {
		i, ok := slices.BinarySearch(m.ids, id)
		if !ok {
			return 0, fmt.Errorf("NUMA node %d is not in this partition", id)
		}
		mask |= 1 << i
	}
	return mask, nil
}

// CheckInvariants verifies the MemoryTable invariants and the group rules
// on an exported Node Map; tests call it after every operation.
func CheckInvariants(nm map[int]NodeState) error {
	for id, n := range nm {
		pools := hugepagePools(n)
		for r, t := range n.MemoryMap {
			held := uint64(0) // what the table's total holds besides allocatable and reserved
			if r == ResourceMemory {
				held = pools
			}
			if t.SystemReserved > t.TotalMemSize || held > t.TotalMemSize-t.SystemReserved || t.Allocatable != t.TotalMemSize-t.SystemReserved-held {
				return fmt.Errorf("node %d %s: allocatable %d != total %d - systemReserved %d - hugepage pools %d", id, r, t.Allocatable, t.TotalMemSize, t.SystemReserved, held)
			}
			if t.Free+t.Reserved != t.Allocatable || t.Free > t.Allocatable {
				return fmt.Errorf("node %d %s: free %d + reserved %d != allocatable %d", id, r, t.Free, t.Reserved, t.Allocatable)
			}
		}
		if n.NumberOfAssignments < 0 {
			return fmt.Errorf("node %d: negative assignments", id)
		}
		if n.NumberOfAssignments == 0 && (len(n.Cells) != 1 || n.Cells[0] != id) {
			return fmt.Errorf("node %d: no assignments but cells %v", id, n.Cells)
		}
		if !slices.Contains(n.Cells, id) {
			return fmt.Errorf("node %d: cells %v do not contain the node", id, n.Cells)
		}
	}
	return nil
}

// hugepagePools is the memory a node's hugepage pools take out of its
// MemTotal: the sum of the hugepage tables' totals.
func hugepagePools(n NodeState) uint64 {
	sum := uint64(0)
	for r, t := range n.MemoryMap {
		if r != ResourceMemory {
			sum += t.TotalMemSize
		}
	}
	return sum
}
