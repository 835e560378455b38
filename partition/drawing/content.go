package drawing

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// content is what both drawings show, before any layout: a caption, a
// card per partition, one for the host, one for the distances. Every
// NUMA node of the topology is on exactly one card (its partition's, or
// the host's) and every online CPU in exactly one place.
type content struct {
	title   string
	caption []string
	cards   []card
}

// card is a framed group: a heading, lines of text, NUMA nodes, and the
// CPUs no NUMA node lists.
type card struct {
	color   string // frame
	head    string
	lines   []string
	table   []string // lines kept whole (a matrix): never wrapped
	nodes   []nodeView
	orphans []cpuView
}

// nodeView is one NUMA node: a heading, memory and PCI lines, its CPUs.
type nodeView struct {
	id       int
	head     string
	lines    []string
	cpus     []cpuView
	excluded bool
}

// cpuView is one online CPU and who gets it.
type cpuView struct {
	id           int
	owner, color string
}

// gather reads the picture's content off the plan and the topology.
func gather(pic Picture) (content, error) {
	plan, topo := pic.Plan, pic.Topology
	c := content{title: fmt.Sprintf("%s: %d partitions", plan.Hostname, len(plan.Partitions))}
	var nodeCPUs bitmask.CPUSet
	for _, n := range topo.Nodes {
		nodeCPUs = nodeCPUs.Union(n.CPUs)
	}
	c.caption = append(c.caption,
		fmt.Sprintf("%d sockets, %d NUMA nodes, %d online CPUs", len(topo.Sockets), len(topo.Nodes), topo.Online.Len()),
		fmt.Sprintf("numa-partition %s, config %s", orNone(pic.Version), configName(pic.ConfigDigest)))

	inPartition := map[int]bool{}
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		cd, err := partitionCard(p, pic.Allocatable[p.Name])
		if err != nil {
			return c, err
		}
		for _, id := range p.Nodes.IDs() {
			inPartition[id] = true
			if n, ok := topo.Node(id); ok {
				cd.nodes = append(cd.nodes, nodeOf(plan, topo, *n))
			} else {
				cd.lines = append(cd.lines, fmt.Sprintf("NUMA node %d: not on this machine", id))
			}
		}
		c.cards = append(c.cards, cd)
	}

	host := hostCard(plan, topo)
	for _, n := range topo.Nodes {
		if !inPartition[n.ID] {
			host.nodes = append(host.nodes, nodeOf(plan, topo, n))
		}
	}
	for _, cpu := range topo.Online.Difference(nodeCPUs).IDs() {
		host.orphans = append(host.orphans, cpuOf(plan, cpu))
	}
	c.cards = append(c.cards, host)
	if d := distanceCard(topo); d.head != "" {
		c.cards = append(c.cards, d)
	}
	return c, nil
}

func configName(digest string) string {
	if digest == "" {
		return "defaults (no file)"
	}
	return digest
}

// hostCard is what the host keeps: CPUs, memory nodes, shares, excluded
// nodes, and the PCI functions no NUMA node claims.
func hostCard(plan *planner.Plan, topo *numa.Topology) card {
	h := plan.Host
	cd := card{color: hostColor, head: "host"}
	cd.lines = append(cd.lines, "keeps CPUs "+orNone(h.ReservedCPUs.String())+" (grey)")
	if !h.OrphanCPUs.IsEmpty() {
		cd.lines = append(cd.lines, "CPUs "+h.OrphanCPUs.String()+" are on no NUMA node")
	}
	cd.lines = append(cd.lines, "memory from NUMA nodes "+orNone(h.MemoryNodes.String()))
	if !h.ExcludedNodes.IsEmpty() {
		cd.lines = append(cd.lines, "excluded NUMA nodes "+h.ExcludedNodes.String())
	}
	if s := h.Shares; s.EphemeralStorageBytes > 0 || s.PIDs > 0 {
		cd.lines = append(cd.lines, fmt.Sprintf("keeps ephemeral-storage %s, pids %d", size(s.EphemeralStorageBytes), s.PIDs))
	}
	known := topo.NodeIDs()
	var loose []numa.PCIDevice
	for _, d := range topo.PCI {
		if d.Node < 0 || d.Node >= bitmask.MaxNodes || !known.Has(d.Node) {
			loose = append(loose, d)
		}
	}
	if lines := pciLines(loose); len(lines) > 0 {
		cd.lines = append(cd.lines, "PCI without NUMA locality:")
		cd.lines = append(cd.lines, indent(lines)...)
	}
	return cd
}

// nodeOf is NUMA node n as the plan has it.
func nodeOf(plan *planner.Plan, topo *numa.Topology, n numa.Node) nodeView {
	v := nodeView{id: n.ID, excluded: plan.Host.ExcludedNodes.Has(n.ID)}
	var sockets []int
	for _, s := range topo.Sockets {
		if s.Nodes.Has(n.ID) {
			sockets = append(sockets, s.ID)
		}
	}
	sort.Ints(sockets)
	v.head = fmt.Sprintf("NUMA node %d", n.ID)
	switch len(sockets) {
	case 0:
	case 1:
		v.head += fmt.Sprintf(" · socket %d", sockets[0])
	default:
		v.head += " · sockets " + ids(sockets)
	}
	if v.excluded {
		v.head += " · excluded"
	}
	v.lines = memoryLines(plan, n)
	var here []numa.PCIDevice
	for _, d := range topo.PCI {
		if d.Node == n.ID {
			here = append(here, d)
		}
	}
	v.lines = append(v.lines, pciLines(here)...)
	for _, cpu := range n.CPUs.IDs() {
		v.cpus = append(v.cpus, cpuOf(plan, cpu))
	}
	return v
}

// cpuOf is who gets a CPU: a partition's name and colour, or the host.
func cpuOf(plan *planner.Plan, cpu int) cpuView {
	for _, p := range plan.Partitions {
		if p.CPUs.Has(cpu) {
			return cpuView{cpu, p.Name, fill(p)}
		}
	}
	return cpuView{cpu, "host", hostColor}
}

// memoryLines describe a node's memory and hugepages as the plan has them.
func memoryLines(plan *planner.Plan, n numa.Node) []string {
	line := "memory " + size(n.MemoryBytes)
	nm, ok := nodeMemory(plan, n.ID)
	if !ok {
		return []string{line}
	}
	if nm.ReservedBytes > 0 {
		line += ", host keeps " + size(nm.ReservedBytes)
	}
	lines := []string{line}
	var pages []string
	for _, h := range nm.Hugepages {
		if h.Count > 0 {
			s := fmt.Sprintf("%d×%s", h.Count, size(h.PageSize))
			if h.ReservedCount > 0 {
				s += fmt.Sprintf(" (%d kept)", h.ReservedCount)
			}
			pages = append(pages, s)
		}
	}
	if len(pages) > 0 {
		lines = append(lines, "hugepages "+strings.Join(pages, ", "))
	}
	return lines
}

// nodeMemory is the plan's view of node id: a partition's or the
// excluded memory's.
func nodeMemory(plan *planner.Plan, id int) (planner.NodeMemory, bool) {
	for _, p := range plan.Partitions {
		if i := slices.IndexFunc(p.Memory, func(m planner.NodeMemory) bool { return m.Node == id }); i >= 0 {
			return p.Memory[i], true
		}
	}
	if i := slices.IndexFunc(plan.Host.ExcludedMemory, func(m planner.NodeMemory) bool { return m.Node == id }); i >= 0 {
		return plan.Host.ExcludedMemory[i], true
	}
	return planner.NodeMemory{}, false
}

func indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "  " + l
	}
	return out
}
