package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// group is one future partition while planning: its nodes and the
// [[partition]] entry that overrides it (-1 for none).
type group struct {
	cpuNodes bitmask.NodeSet // the nodes that made the group
	nodes    bitmask.NodeSet // cpuNodes plus attached CPU-less nodes
	override int
}

// planGroups groups the machine's nodes into partitions by mode, then
// gives each CPU-less node to the nearest partition. It returns the groups
// in index order and the excluded nodes.
func (pl *planning) planGroups() ([]group, bitmask.NodeSet) {
	m, c, col, warn := pl.m, pl.c, pl.col, pl.warn
	excluded := c.Partitioning.ExcludeNodes.Nodes
	if unknown := excluded.Difference(m.nodes); !unknown.IsEmpty() {
		col.Add("partitioning.exclude_nodes", "names nodes %s that the machine does not have (it has %s)", unknown, m.nodes)
		excluded = excluded.Intersect(m.nodes)
	}
	avail := m.cpuNodes().Difference(excluded)

	var groups []group
	switch mode := c.Partitioning.Mode; mode {
	case "", config.ModeSocket, config.ModeNode:
		if len(c.Partitioning.Groups) > 0 {
			col.Add("partitioning.groups", "groups are only read with mode = \"custom\" (mode is %q)", modeOr(mode))
		}
		var sets []bitmask.NodeSet
		if mode == config.ModeNode {
			for _, id := range avail.IDs() {
				sets = append(sets, bitmask.NewNodeSet(id))
			}
		} else {
			sets = socketSets(m, avail)
		}
		for _, s := range pl.mergeOverlapping(sets) {
			groups = append(groups, group{cpuNodes: s, nodes: s, override: -1})
		}
		sort.Slice(groups, func(i, j int) bool { return groups[i].cpuNodes.Min() < groups[j].cpuNodes.Min() })
	case config.ModeCustom:
		groups = pl.customGroups(excluded)
	default:
		col.Add("partitioning.mode", "%q is not a mode (allowed: socket, node, custom)", mode)
		return nil, excluded
	}

	var taken bitmask.NodeSet
	for _, g := range groups {
		taken = taken.Union(g.nodes)
	}
	ties := map[string]bitmask.NodeSet{} // "nodes 0 as to nodes 8" → CPU-less nodes
	for _, id := range m.nodes.Difference(taken).Difference(excluded).IDs() {
		switch {
		case !m.nodeCPUs[id].IsEmpty():
			// A CPU node outside every custom group: already reported.
		case !m.hasMemory(id):
			warn("node %d has neither online CPUs nor memory; it is left out of every partition", id)
			excluded = excluded.Add(id)
		case len(groups) > 0:
			if tie := attachNearest(m, groups, id); tie != "" {
				ties[tie] = ties[tie].Add(id)
			}
		}
	}
	for _, tie := range sortedKeys(ties) {
		warn("nodes %s have no CPUs and are as near to %s; they join the first (set partitioning.exclude_nodes or use mode = \"custom\" to choose)", ties[tie], tie)
	}
	return groups, excluded
}

func modeOr(mode string) string {
	if mode == "" {
		return config.ModeSocket
	}
	return mode
}

// socketSets is each socket's nodes; CPU nodes no socket claims get their
// own set, so that no online CPU is lost.
func socketSets(m *machine, avail bitmask.NodeSet) []bitmask.NodeSet {
	sockets := append(m.t.Sockets[:0:0], m.t.Sockets...)
	sort.Slice(sockets, func(i, j int) bool { return sockets[i].ID < sockets[j].ID })
	var sets []bitmask.NodeSet
	var covered bitmask.NodeSet
	for _, s := range sockets {
		nodes := s.Nodes.Union(m.nodesOfCPUs(s.CPUs)).Intersect(avail)
		if nodes.IsEmpty() {
			continue
		}
		sets = append(sets, nodes)
		covered = covered.Union(nodes)
	}
	for _, id := range avail.Difference(covered).IDs() {
		sets = append(sets, bitmask.NewNodeSet(id))
	}
	return sets
}

// mergeOverlapping joins sets that share a node (several sockets on one
// node, as on Altix and Magny-Cours) or a CPU. Sharing CPUs across
// disjoint nodes is a firmware bug (one dump lists every CPU on all 8
// nodes); two partitions can never share a CPU, so such nodes become one
// partition, with a warning.
func (pl *planning) mergeOverlapping(sets []bitmask.NodeSet) []bitmask.NodeSet {
	m, warn := pl.m, pl.warn
	if cpus, nodes := m.sharedCPUs(); !cpus.IsEmpty() {
		warn("CPUs %s are listed on several of nodes %s (a firmware error); nodes sharing CPUs form one partition", cpus, nodes)
	}
	out := append([]bitmask.NodeSet(nil), sets...)
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(out) && !merged; i++ {
			for j := i + 1; j < len(out); j++ {
				shared := m.cpusOf(out[i]).Intersect(m.cpusOf(out[j]))
				if out[i].Intersect(out[j]).IsEmpty() && shared.IsEmpty() {
					continue
				}
				out[i] = out[i].Union(out[j])
				out = append(out[:j], out[j+1:]...)
				merged = true
				break
			}
		}
	}
	return out
}

// customGroups reads partitioning.groups, or the [[partition]] nodes when
// there are no groups, and checks that they cover every CPU node once.
func (pl *planning) customGroups(excluded bitmask.NodeSet) []group {
	m, c, col := pl.m, pl.c, pl.col
	type source struct {
		key      string
		nodes    bitmask.NodeSet
		override int
	}
	var srcs []source
	if len(c.Partitioning.Groups) > 0 {
		for i, g := range c.Partitioning.Groups {
			srcs = append(srcs, source{fmt.Sprintf("partitioning.groups[%d]", i), g.Nodes, -1})
		}
	} else {
		for i, p := range c.Partitions {
			key := fmt.Sprintf("partition[%d].nodes", i)
			if !p.Nodes.Set {
				col.Add(fmt.Sprintf("partition[%d]", i), "mode = \"custom\" without partitioning.groups takes the partitions from [[partition]] entries, and this one has no nodes")
				continue
			}
			srcs = append(srcs, source{key, p.Nodes.Nodes, i})
		}
		if len(srcs) == 0 && len(c.Partitions) == 0 {
			col.Add("partitioning.mode", "mode = \"custom\" needs partitioning.groups (e.g. groups = [[0, 1], [2, 3]]) or [[partition]] entries with nodes")
		}
	}
	var groups []group
	var taken bitmask.NodeSet
	owner := map[int]string{}
	for _, s := range srcs {
		nodes := s.nodes
		if nodes.IsEmpty() {
			col.Add(s.key, "a group needs at least one node")
			continue
		}
		if unknown := nodes.Difference(m.nodes); !unknown.IsEmpty() {
			col.Add(s.key, "names nodes %s that the machine does not have (it has %s)", unknown, m.nodes)
			nodes = nodes.Intersect(m.nodes)
		}
		if ex := nodes.Intersect(excluded); !ex.IsEmpty() {
			col.Add(s.key, "names nodes %s that partitioning.exclude_nodes excludes; a node is either in a group or excluded", ex)
			nodes = nodes.Difference(ex)
		}
		if dup := nodes.Intersect(taken); !dup.IsEmpty() {
			col.Add(s.key, "nodes %s are already in %s; groups must not overlap", dup, owner[dup.Min()])
			nodes = nodes.Difference(dup)
		}
		for _, g := range groups {
			if shared := m.cpusOf(g.nodes).Intersect(m.cpusOf(nodes)); !shared.IsEmpty() {
				col.Add(s.key, "nodes %s share CPUs %s with nodes %s (the firmware lists them on both); put them in one group", nodes, shared, g.nodes)
			}
		}
		for _, id := range nodes.IDs() {
			owner[id] = s.key
		}
		taken = taken.Union(nodes)
		groups = append(groups, group{cpuNodes: nodes, nodes: nodes, override: s.override})
	}
	if len(srcs) > 0 {
		if left := m.cpuNodes().Difference(excluded).Difference(taken); !left.IsEmpty() {
			key := "partitioning.groups"
			if len(c.Partitioning.Groups) == 0 {
				key = "partition"
			}
			col.Add(key, "nodes %s have CPUs %s but are in no group; add them to a group or to partitioning.exclude_nodes", left, m.cpusOf(left))
		}
	}
	return groups
}

// attachNearest gives a CPU-less node to the partition nearest by NUMA
// distance; ties go to the lowest index (which is also the lowest node id
// in socket and node modes), so all-10 matrices plan deterministically.
// A tie is returned as text for one warning per set of tied partitions.
func attachNearest(m *machine, groups []group, id int) string {
	best, bestDist := 0, m.distance(id, groups[0].cpuNodes)
	var tied []string
	for i := 1; i < len(groups); i++ {
		d := m.distance(id, groups[i].cpuNodes)
		switch {
		case d < bestDist:
			best, bestDist, tied = i, d, nil
		case d == bestDist:
			tied = append(tied, groups[i].cpuNodes.String())
		}
	}
	groups[best].nodes = groups[best].nodes.Add(id)
	if len(tied) == 0 {
		return ""
	}
	return fmt.Sprintf("nodes %s as to nodes %s", groups[best].cpuNodes, strings.Join(tied, ", nodes "))
}
