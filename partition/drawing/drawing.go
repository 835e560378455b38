// Package drawing draws a plan over its machine, the picture an operator
// pastes into a review: sockets, their NUMA nodes with memory and
// hugepages, and every CPU coloured by the partition that gets it (grey:
// the host's). SVG needs no tool to view; DOT is for Graphviz users.
// Both are pure and deterministic: the same plan draws the same bytes.
package drawing

import (
	"fmt"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// Owner kinds of a CPU or node besides a partition.
const (
	hostColor     = "#b0b0b0"
	noneColor     = "#ffffff"
	excludedColor = "#e8e8e8"
)

// palette gives the plan's colour names (planner.Colors) a fill; names
// beyond it ("color17") cycle through it.
var palette = map[string]string{
	"red": "#e05252", "blue": "#4f7fd9", "green": "#4caf50", "yellow": "#e6c229",
	"orange": "#f08c2e", "purple": "#9060c0", "cyan": "#33b5c5", "magenta": "#d050b0",
	"brown": "#9a6b45", "pink": "#f28fb0", "olive": "#9a9a30", "teal": "#2b8c8c",
	"navy": "#34508f", "maroon": "#8f3040", "lime": "#9ccc3c", "gray": "#707070",
}

// fill is the colour of partition p.
func fill(p planner.Partition) string {
	if c, ok := palette[p.Color]; ok {
		return c
	}
	return palette[planner.Colors[p.Index%len(planner.Colors)]]
}

// machine is what both drawings show, gathered once.
type machine struct {
	plan    *planner.Plan
	topo    *numa.Topology
	owner   map[int]*planner.Partition // NUMA node -> its partition
	memory  map[int]planner.NodeMemory // NUMA node -> the plan's view
	sockets []numa.Socket              // ascending by id
	loose   []numa.Node                // nodes with no socket's CPUs (memory-only, CXL)
}

func gather(plan *planner.Plan, topo *numa.Topology) machine {
	m := machine{plan: plan, topo: topo, owner: map[int]*planner.Partition{}, memory: map[int]planner.NodeMemory{}}
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		for _, n := range p.Nodes.IDs() {
			m.owner[n] = p
		}
		for _, nm := range p.Memory {
			m.memory[nm.Node] = nm
		}
	}
	for _, nm := range plan.Host.ExcludedMemory {
		m.memory[nm.Node] = nm
	}
	m.sockets = append(m.sockets, topo.Sockets...)
	sort.Slice(m.sockets, func(i, j int) bool { return m.sockets[i].ID < m.sockets[j].ID })
	var inSocket bitmask.NodeSet
	for _, s := range m.sockets {
		inSocket = inSocket.Union(s.Nodes)
	}
	for _, n := range topo.Nodes {
		if !inSocket.Has(n.ID) {
			m.loose = append(m.loose, n)
		}
	}
	return m
}

// socketNodes are the topology's nodes of socket s, ascending.
func (m machine) socketNodes(s numa.Socket) []numa.Node {
	var nodes []numa.Node
	for _, id := range s.Nodes.IDs() {
		if n, ok := m.topo.Node(id); ok {
			nodes = append(nodes, *n)
		}
	}
	return nodes
}

// cpuOwner is who gets a CPU: a partition's name and colour, or the host.
func (m machine) cpuOwner(cpu int) (name, color string) {
	for _, p := range m.plan.Partitions {
		if p.CPUs.Has(cpu) {
			return p.Name, fill(p)
		}
	}
	if m.plan.Host.ReservedCPUs.Has(cpu) || m.plan.Host.OrphanCPUs.Has(cpu) {
		return "host", hostColor
	}
	return "offline", noneColor
}

// nodeLabel is a node's header: id, kind, and who gets it.
func (m machine) nodeLabel(n numa.Node) string {
	who := "no partition"
	if p, ok := m.owner[n.ID]; ok {
		who = p.Name
	} else if m.plan.Host.ExcludedNodes.Has(n.ID) {
		who = "excluded"
	}
	return fmt.Sprintf("NUMA node %d · %s", n.ID, who)
}

// memoryLines describe a node's memory and hugepages as the plan has them.
func (m machine) memoryLines(n numa.Node) []string {
	lines := []string{"memory " + size(n.MemoryBytes)}
	nm, ok := m.memory[n.ID]
	if !ok {
		return lines
	}
	if nm.ReservedBytes > 0 {
		lines[0] += ", host keeps " + size(nm.ReservedBytes)
	}
	var pages []string
	for _, h := range nm.Hugepages {
		if h.Count > 0 {
			pages = append(pages, fmt.Sprintf("%d×%s", h.Count, size(h.PageSize)))
		}
	}
	if len(pages) > 0 {
		lines = append(lines, "hugepages "+strings.Join(pages, ", "))
	}
	return lines
}

// size prints bytes for people: the largest binary unit, one decimal
// where it is not exact.
func size(b uint64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}} {
		if b >= 1<<u.shift {
			if b%(1<<u.shift) == 0 {
				return fmt.Sprintf("%d%s", b>>u.shift, u.suffix)
			}
			return fmt.Sprintf("%.1f%s", float64(b)/float64(uint64(1)<<u.shift), u.suffix)
		}
	}
	return fmt.Sprintf("%dB", b)
}

// legend is one line per partition and the host's share.
func (m machine) legend() []legendEntry {
	var out []legendEntry
	for _, p := range m.plan.Partitions {
		text := fmt.Sprintf("%s (numa-type %s): NUMA nodes %s, CPUs %s", p.Name, p.Color, p.Nodes, p.CPUs)
		if p.Network != nil {
			text += ", address " + p.Network.Address.Addr().String()
		}
		out = append(out, legendEntry{fill(p), text})
	}
	out = append(out, legendEntry{hostColor, "host: CPUs " + orNone(m.plan.Host.ReservedCPUs.Union(m.plan.Host.OrphanCPUs).String())})
	if !m.plan.Host.ExcludedNodes.IsEmpty() {
		out = append(out, legendEntry{excludedColor, "excluded NUMA nodes " + m.plan.Host.ExcludedNodes.String()})
	}
	return out
}

type legendEntry struct{ color, text string }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
