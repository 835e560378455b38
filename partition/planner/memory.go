package planner

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// planMemory fills each partition's per-node memory: where its kubelet's
// reservation lies and which hugepages apply allocates.
//
// Invariant (kubelet's Memory Manager rule, tested): for every partition,
// Σ ReservedBytes over its nodes = KubeReservedMemory + SystemReservedMemory
// + EvictionHardMemory. Render adds the foreign nodes on top.
func (pl *planning) planMemory() {
	m, plan, perPart, col := pl.m, pl.plan, pl.perPart, pl.col
	owner := map[int]int{} // node → partition index
	for i, p := range plan.Partitions {
		for _, id := range p.Nodes.IDs() {
			owner[id] = i
		}
	}
	placed := pl.reservedMemoryMap(owner)
	pages := pl.hugepagesPlan(owner)

	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		kl := p.Kubelet
		total := kl.KubeReservedMemory + kl.SystemReservedMemory + kl.EvictionHardMemory
		reserved := map[int]uint64{}
		var named bitmask.NodeSet
		for _, id := range p.Nodes.IDs() {
			if b, ok := placed[id]; ok {
				reserved[id] = b
				named = named.Add(id)
			}
		}
		if !named.IsEmpty() {
			var sum uint64
			for _, b := range reserved {
				sum += b
			}
			if sum != total {
				col.Add("host.reserved_memory", "partition %s reserves %s on nodes %s but its kubelet reserves kube %s + system %s + eviction %s = %s; kubelet's Memory Manager needs both equal",
					p.Name, units.FormatBytes(sum), named, units.FormatBytes(kl.KubeReservedMemory), units.FormatBytes(kl.SystemReservedMemory),
					units.FormatBytes(kl.EvictionHardMemory), units.FormatBytes(total))
			}
		} else if first := firstMemoryNode(m, p.Nodes); first >= 0 {
			reserved[first] = total
		} else {
			col.Add("", "partition %s (nodes %s) has no node with memory", p.Name, p.Nodes)
		}
		if total == 0 && kl.MemoryManagerPolicy == "Static" {
			col.Add(perPart[i].key["kube_reserved_memory"], "partition %s: the Static memory manager needs some reserved memory, and kube, system and eviction reservations are all 0", p.Name)
		}

		p.Memory = make([]NodeMemory, 0, p.Nodes.Len())
		for _, id := range p.Nodes.IDs() {
			nm := NodeMemory{Node: id, TotalBytes: m.memory[id], ReservedBytes: reserved[id], Hugepages: pages[id], PageSizes: m.pageSizes(id)}
			if nm.Hugepages == nil {
				nm.Hugepages = []HugepagePlan{}
			}
			pl.checkNodeCapacity(nm, p.Name)
			p.Memory = append(p.Memory, nm)
		}
	}
}

// firstMemoryNode is where a partition's reservation goes by default: its
// lowest node with both CPUs and memory (the kubelet's own processes run
// near there), else its lowest node with memory.
func firstMemoryNode(m *machine, nodes bitmask.NodeSet) int {
	mem := m.memoryNodes(nodes)
	if withCPU := mem.Intersect(m.cpuNodes()); !withCPU.IsEmpty() {
		return withCPU.Min()
	}
	return mem.Min()
}

// reservedMemoryMap parses host.reserved_memory (node id → size).
func (pl *planning) reservedMemoryMap(owner map[int]int) map[int]uint64 {
	m, c, col := pl.m, pl.c, pl.col
	out := map[int]uint64{}
	for _, k := range sortedKeys(c.Host.ReservedMemory) {
		key := "host.reserved_memory." + k
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 {
			col.Add(key, "%q is not a NUMA node id (write node = \"size\", e.g. 0 = \"1100Mi\")", k)
			continue
		}
		if !m.nodes.Has(id) {
			col.Add(key, "node %d does not exist on this machine (it has %s)", id, m.nodes)
			continue
		}
		if _, ok := owner[id]; !ok {
			col.Add(key, "node %d is in no partition (excluded or empty); reserved memory only counts on partition nodes", id)
			continue
		}
		b, err := units.ParseBytes(c.Host.ReservedMemory[k])
		if err != nil {
			col.Add(key, "%v", err)
			continue
		}
		out[id] = b
	}
	return out
}

// hugepagesPlan parses host.hugepages into pages per node, ascending by size.
func (pl *planning) hugepagesPlan(owner map[int]int) map[int][]HugepagePlan {
	m, c, plan, col, warn := pl.m, pl.c, pl.plan, pl.col, pl.warn
	var partNodes bitmask.NodeSet
	for _, p := range plan.Partitions {
		partNodes = partNodes.Union(p.Nodes)
	}
	out := map[int][]HugepagePlan{}
	seen := map[[2]uint64]int{} // (node, size) → entry
	for j, h := range c.Host.Hugepages {
		key := fmt.Sprintf("host.hugepages[%d]", j)
		size, err := units.ParseBytes(h.Size)
		switch {
		case h.Size == "":
			col.Add(key+".size", "is required (a page size like \"2Mi\" or \"1Gi\")")
			continue
		case err != nil:
			col.Add(key+".size", "%v", err)
			continue
		case size < 4096 || bits.OnesCount64(size) != 1:
			col.Add(key+".size", "%q is not a page size (a power of two of at least 4Ki, like \"2Mi\" or \"1Gi\")", h.Size)
			continue
		}
		if h.Count < 0 {
			col.Add(key+".count", "%d is not a number of pages (allowed: 0 or more)", h.Count)
			continue
		}
		nodes := partNodes.Intersect(m.cpuNodes())
		if h.Nodes.Set {
			nodes = h.Nodes.Nodes
			if bad := nodes.Difference(partNodes); !bad.IsEmpty() {
				col.Add(key+".nodes", "nodes %s are in no partition (unknown, excluded or empty); hugepages go on partition nodes (%s)", bad, partNodes)
				nodes = nodes.Intersect(partNodes)
			}
		}
		for _, id := range nodes.IDs() {
			if prev, dup := seen[[2]uint64{uint64(id), size}]; dup {
				col.Add(key, "node %d already gets %s pages from host.hugepages[%d]; one entry per node and size", id, units.FormatBytes(size), prev)
				continue
			}
			seen[[2]uint64{uint64(id), size}] = j
			if sizes := m.node[id].Hugepages; len(sizes) > 0 && !supportsPageSize(m, id, size) {
				col.Add(key+".size", "node %d has no %s pages (its sizes: %s)", id, units.FormatBytes(size), pageSizes(m, id))
				continue
			} else if len(sizes) == 0 {
				warn("node %d reports no hugepage sizes; %s pages planned there are unchecked", id, units.FormatBytes(size))
			}
			out[id] = append(out[id], HugepagePlan{PageSize: size, Count: uint64(h.Count)})
		}
	}
	pl.planUnlistedHugepages(out, partNodes)
	for id := range out {
		sort.Slice(out[id], func(a, b int) bool { return out[id][a].PageSize < out[id][b].PageSize })
	}
	return out
}

func supportsPageSize(m *machine, id int, size uint64) bool {
	for _, h := range m.node[id].Hugepages {
		if h.PageSize == size {
			return true
		}
	}
	return false
}

func pageSizes(m *machine, id int) string {
	var s []string
	for _, h := range m.node[id].Hugepages {
		s = append(s, units.FormatBytes(h.PageSize))
	}
	return strings.Join(s, ", ")
}

// checkNodeCapacity: hugepages and the reservation must fit the node.
func (pl *planning) checkNodeCapacity(nm NodeMemory, partition string) {
	col, warn := pl.col, pl.warn
	var huge uint64
	var parts []string
	for _, h := range nm.Hugepages {
		// Saturating: a count near 2^64 is reported, never wrapped small.
		if h.Count > 0 && h.PageSize > (^uint64(0)-huge)/h.Count {
			huge = ^uint64(0)
		} else {
			huge += h.Count * h.PageSize
		}
		parts = append(parts, fmt.Sprintf("%d × %s", h.Count, units.FormatBytes(h.PageSize)))
	}
	if nm.TotalBytes == 0 {
		if huge > 0 {
			col.Add("host.hugepages", "node %d (partition %s) gets %s of hugepages but its memory size is unknown (no meminfo in sysfs)", nm.Node, partition, config.Whole(strings.Join(parts, " + ")))
		} else if nm.ReservedBytes > 0 {
			warn("node %d (partition %s): memory size unknown, the %s reservation is unchecked", nm.Node, partition, units.FormatBytes(nm.ReservedBytes))
		}
		return
	}
	if huge == 0 && nm.ReservedBytes > nm.TotalBytes {
		col.Add("kubelet.kube_reserved_memory", "node %d (partition %s) has %s of memory, less than the %s its kubelet reserves there (kube + system + eviction); lower them or spread them with host.reserved_memory",
			nm.Node, partition, units.FormatBytes(nm.TotalBytes), units.FormatBytes(nm.ReservedBytes))
		return
	}
	if huge > nm.TotalBytes || nm.ReservedBytes > nm.TotalBytes-huge {
		total := units.FormatBytes(huge)
		if huge == ^uint64(0) {
			total = "more than 16Ei" // saturated above
		}
		col.Add("host.hugepages", "node %d (partition %s): hugepages %s = %s plus %s reserved exceed its memory %s",
			nm.Node, partition, strings.Join(parts, " + "), total, units.FormatBytes(nm.ReservedBytes), units.FormatBytes(nm.TotalBytes))
	}
}
