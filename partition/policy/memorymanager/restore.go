package memorymanager

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"sort"

	"github.com/numa-partition/numa-partition/numa/units"
)

// Drift lists every (node, resource) whose capacity in a checkpointed Node
// Map differs from this partition's, and nodes present in only one.
func (s *Static) Drift(nm map[int]NodeState) []string {
	nm = kubeletLayout(nm)
	var notes []string
	cur := s.m.export()
	for id, n := range cur {
		old, ok := nm[id]
		if !ok {
			notes = append(notes, fmt.Sprintf("node %d: new since the checkpoint", id))
			continue
		}
		for _, r := range s.m.resources {
			o, c := old.MemoryMap[r], n.MemoryMap[r]
			if o.TotalMemSize != c.TotalMemSize || o.SystemReserved != c.SystemReserved {
				notes = append(notes, fmt.Sprintf("node %d %s: total %s reserved %s, was total %s reserved %s", id, r,
					units.FormatBytes(c.TotalMemSize), units.FormatBytes(c.SystemReserved), units.FormatBytes(o.TotalMemSize), units.FormatBytes(o.SystemReserved)))
			}
		}
		for r := range old.MemoryMap {
			if _, ok := s.m.resourceIndex(r); !ok {
				notes = append(notes, fmt.Sprintf("node %d %s: gone since the checkpoint", id, r))
			}
		}
	}
	for id := range nm {
		if _, ok := cur[id]; !ok {
			notes = append(notes, fmt.Sprintf("node %d: gone since the checkpoint", id))
		}
	}
	sort.Strings(notes)
	return notes
}

// kubeletLayout reads checkpoints written before the memory table took
// kubelet's layout, whose "memory" total left out the hugepage pools: such
// a table (Allocatable = Total - SystemReserved on a node with pools) gets
// the pools added back to its total. Nothing else changes; with no pools
// the two layouts are the same.
func kubeletLayout(nm map[int]NodeState) map[int]NodeState {
	out := make(map[int]NodeState, len(nm))
	for id, n := range nm {
		t, ok := n.MemoryMap[ResourceMemory]
		pools := hugepagePools(n)
		if ok && pools > 0 && t.SystemReserved <= t.TotalMemSize && t.Allocatable == t.TotalMemSize-t.SystemReserved {
			mm := maps.Clone(n.MemoryMap)
			t.TotalMemSize += pools
			mm[ResourceMemory] = t
			n.MemoryMap = mm
		}
		out[id] = n
	}
	return out
}

// Adopt takes a checkpointed Node Map and blocks verbatim; the hardware
// must not have drifted (see Drift). order gives each pod's containers in
// allocation order.
func (s *Static) Adopt(nm map[int]NodeState, blocks map[string]map[string][]Block, order map[string][]string) error {
	nm = kubeletLayout(nm)
	if d := s.Drift(nm); len(d) > 0 {
		return fmt.Errorf("checkpoint does not match the partition: %s", d[0])
	}
	if err := CheckInvariants(nm); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	m := s.m.clone()
	for i, id := range m.ids {
		n := nm[id]
		for ri, r := range m.resources {
			m.tables[i][ri] = n.MemoryMap[r]
		}
		m.assignments[i] = n.NumberOfAssignments
		cells, err := m.maskOf(n.Cells)
		if err != nil {
			return fmt.Errorf("checkpoint node %d cells: %w", id, err)
		}
		m.cells[i] = cells
	}
	// The assignments must be exactly what the blocks account for.
	count := make([]int, len(m.ids))
	for pod, bs := range blocks {
		for name, list := range bs {
			if !slices.Contains(order[pod], name) {
				return fmt.Errorf("checkpoint pod %s container %s: blocks without an allocation", pod, name)
			}
			for _, b := range list {
				mask, err := m.maskOf(b.NUMAAffinity)
				if err != nil || mask == 0 {
					return fmt.Errorf("checkpoint pod %s container %s: block affinity %v: not in this partition", pod, name, b.NUMAAffinity)
				}
				for x := mask; x != 0; x &= x - 1 {
					count[bits.TrailingZeros64(x)]++
				}
			}
		}
	}
	if !slices.Equal(count, m.assignments) {
		return fmt.Errorf("checkpoint: numberOfAssignments %v do not match the blocks (%v)", m.assignments, count)
	}
	if err := blocksFitTables(m, blocks); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	s.m = m
	s.blocks, s.order = map[string]map[string][]Block{}, map[string][]string{}
	for pod, names := range order {
		for _, name := range names {
			if bs, ok := blocks[pod][name]; ok {
				s.setBlocks(pod, name, bs)
			}
		}
	}
	return nil
}

// Recharge pins a container's existing blocks on this (possibly changed)
// partition, as Allocate would on their affinity; an error when they no
// longer fit or break the single/cross-NUMA rule. Nothing changes on error.
func (s *Static) Recharge(podUID, name string, bs []Block) error {
	for _, b := range bs {
		mask, err := s.m.maskOf(b.NUMAAffinity)
		if err != nil || mask == 0 {
			return fmt.Errorf("pod %s container %s: %s on nodes %v: not in this partition", podUID, name, b.Type, b.NUMAAffinity)
		}
		col, ok := s.m.resourceIndex(b.Type)
		if !ok && b.Size > 0 {
			return fmt.Errorf("pod %s container %s: %s no longer exists on this partition", podUID, name, b.Type)
		}
		if s.violates(mask) {
			return fmt.Errorf("pod %s container %s: nodes %v break the single/cross-NUMA rule", podUID, name, b.NUMAAffinity)
		}
		if ok && s.sum(mask, col, true) < b.Size {
			return fmt.Errorf("pod %s container %s: %s of %s on nodes %v no longer fits (%s free)", podUID, name,
				units.FormatBytes(b.Size), b.Type, b.NUMAAffinity, units.FormatBytes(s.sum(mask, col, true)))
		}
	}
	for _, b := range bs {
		mask, _ := s.m.maskOf(b.NUMAAffinity)
		col, ok := s.m.resourceIndex(b.Type)
		if !ok {
			col = -1
		}
		s.charge(mask, col, b.Size)
	}
	s.setBlocks(podUID, name, bs)
	return nil
}

// blocksFitTables checks the blocks against the tables they were charged
// to: a checksum proves the file is what was written, not that what was
// written adds up. Every block's resource exists and its size fits the
// allocatable memory of its nodes, and no resource has more reserved than
// its blocks hold (init containers' reuse makes the blocks' sum an upper
// bound, not an equality).
func blocksFitTables(m *machine, blocks map[string]map[string][]Block) error {
	held := make([]uint64, len(m.resources))
	for pod, bs := range blocks {
		for name, list := range bs {
			for _, b := range list {
				col, ok := m.resourceIndex(b.Type)
				if !ok {
					if b.Size > 0 {
						return fmt.Errorf("pod %s container %s: a block of %s, which this partition does not have", pod, name, b.Type)
					}
					continue
				}
				mask, _ := m.maskOf(b.NUMAAffinity)
				var room uint64
				for x := mask; x != 0; x &= x - 1 {
					room += m.tables[bits.TrailingZeros64(x)][col].Allocatable
				}
				if b.Size > room {
					return fmt.Errorf("pod %s container %s: a block of %d bytes of %s on nodes %v, more than their %d allocatable", pod, name, b.Size, b.Type, b.NUMAAffinity, room)
				}
				// A checkpoint's sizes are each bounded, not their count:
				// the sum must not wrap below what is reserved.
				sum, carry := bits.Add64(held[col], b.Size, 0)
				if carry != 0 {
					return fmt.Errorf("%s: the blocks add up to more than 2^64 bytes", b.Type)
				}
				held[col] = sum
			}
		}
	}
	for col, r := range m.resources {
		var reserved uint64
		for i := range m.ids {
			reserved += m.tables[i][col].Reserved
		}
		if reserved > held[col] {
			return fmt.Errorf("%s: %d bytes reserved but the blocks hold %d", r, reserved, held[col])
		}
	}
	return nil
}
