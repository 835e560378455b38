package planner

import (
	"math"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// machine is the planner's view of a Topology: online CPUs per node and the
// facts every rule needs, computed once.
type machine struct {
	t        *numa.Topology
	nodes    bitmask.NodeSet        // every node id
	online   bitmask.CPUSet         // online CPUs
	all      bitmask.CPUSet         // every CPU the machine has, online or not
	nodeCPUs map[int]bitmask.CPUSet // online CPUs of each node
	memory   map[int]uint64         // MemTotal of each node
	node     map[int]*numa.Node     // by id
}

func newMachine(t *numa.Topology) *machine {
	m := &machine{
		t:        t,
		nodes:    t.NodeIDs(),
		nodeCPUs: map[int]bitmask.CPUSet{},
		memory:   map[int]uint64{},
		node:     map[int]*numa.Node{},
	}
	// Dumps without cpu/online still mark CPUs online one by one.
	m.online = t.Online
	if m.online.IsEmpty() {
		var ids []int
		for _, c := range t.CPUs {
			if c.Online {
				ids = append(ids, c.ID)
			}
		}
		m.online = bitmask.NewCPUSet(ids...)
	}
	var nodeAll bitmask.CPUSet
	for i := range t.Nodes {
		n := &t.Nodes[i]
		nodeAll = nodeAll.Union(n.CPUs)
		m.node[n.ID] = n
		m.memory[n.ID] = n.MemoryBytes
	}
	if m.online.IsEmpty() {
		m.online = nodeAll
	}
	for _, n := range t.Nodes {
		m.nodeCPUs[n.ID] = n.CPUs.Intersect(m.online)
	}
	ids := make([]int, 0, len(t.CPUs))
	for _, c := range t.CPUs {
		ids = append(ids, c.ID)
	}
	m.all = bitmask.NewCPUSet(ids...).Union(t.Possible).Union(t.Present).Union(m.online).Union(nodeAll)
	return m
}

// cpuNodes are the nodes with online CPUs.
func (m *machine) cpuNodes() bitmask.NodeSet {
	var s bitmask.NodeSet
	for id, cpus := range m.nodeCPUs {
		if !cpus.IsEmpty() {
			s = s.Add(id)
		}
	}
	return s
}

// cpusOf is the online CPUs of a set of nodes.
func (m *machine) cpusOf(nodes bitmask.NodeSet) bitmask.CPUSet {
	var s bitmask.CPUSet
	for _, id := range nodes.IDs() {
		s = s.Union(m.nodeCPUs[id])
	}
	return s
}

// hasMemory reports whether a node holds memory. Discovery's MemTotal is
// the evidence; a node whose kind says memory counts too when meminfo
// was missing from a dump.
func (m *machine) hasMemory(id int) bool {
	n, ok := m.node[id]
	if !ok {
		return false
	}
	return n.MemoryBytes > 0 || n.Kind == numa.NodeCPUAndMemory || n.Kind == numa.NodeMemoryOnly
}

// memoryNodes is the subset of nodes that hold memory.
func (m *machine) memoryNodes(nodes bitmask.NodeSet) bitmask.NodeSet {
	var s bitmask.NodeSet
	for _, id := range nodes.IDs() {
		if m.hasMemory(id) {
			s = s.Add(id)
		}
	}
	return s
}

// distance from node a to the nearest node of set; MaxInt when unknown.
func (m *machine) distance(a int, set bitmask.NodeSet) int {
	best := math.MaxInt
	for _, b := range set.IDs() {
		if d, ok := m.t.Distance(a, b); ok && d < best {
			best = d
		}
	}
	return best
}

// nodeOfCPU maps online CPUs to the node listing them (lowest id first).
func (m *machine) nodesOfCPUs(cpus bitmask.CPUSet) bitmask.NodeSet {
	var s bitmask.NodeSet
	for _, n := range m.t.Nodes {
		if m.nodeCPUs[n.ID].Intersects(cpus) {
			s = s.Add(n.ID)
		}
	}
	return s
}

// sharedCPUs are online CPUs that more than one node lists, and those nodes.
func (m *machine) sharedCPUs() (bitmask.CPUSet, bitmask.NodeSet) {
	var seen, shared bitmask.CPUSet
	for _, n := range m.t.Nodes {
		cpus := m.nodeCPUs[n.ID]
		shared = shared.Union(seen.Intersect(cpus))
		seen = seen.Union(cpus)
	}
	return shared, m.nodesOfCPUs(shared)
}

// pageSizes are the hugepage sizes node id offers, ascending (nil when
// sysfs shows none).
func (m *machine) pageSizes(id int) []uint64 {
	n, ok := m.node[id]
	if !ok {
		return nil
	}
	var sizes []uint64
	for _, h := range n.Hugepages {
		sizes = append(sizes, h.PageSize)
	}
	return sizes
}

// orphanCPUs are online CPUs no node lists (a dump without node0's
// directory); no partition can own them.
func (m *machine) orphanCPUs() bitmask.CPUSet {
	var listed bitmask.CPUSet
	for _, cpus := range m.nodeCPUs {
		listed = listed.Union(cpus)
	}
	return m.online.Difference(listed)
}
