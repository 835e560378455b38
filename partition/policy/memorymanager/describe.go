package memorymanager

import (
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
)

// Describe says, for each resource of req (sorted by name), what is asked
// and what is free on each of the partition's nodes, nodes of the same
// figures together:
//
//	hugepages-2Mi: asked 4Mi, free 0 on nodes 0-1 (the partition has no 2Mi pages: host.hugepages)
//	memory: asked 12Gi, free 3Gi (of 4Gi) on node 0, 5Gi on node 1
//
// "(of A)" is the node's allocatable memory of that resource when some of
// it is taken. It is what a refusal adds to kubelet's message: kubelet's
// own text names neither the resource nor the figures.
func (s *Static) Describe(req map[ResourceName]uint64) string {
	names := make([]ResourceName, 0, len(req))
	for name := range req {
		names = append(names, name)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, s.describe(name, req[name]))
	}
	return strings.Join(parts, "; ")
}

func (s *Static) describe(name ResourceName, asked uint64) string {
	type figures struct{ free, allocatable uint64 }
	col, ok := s.m.resourceIndex(name)
	var order []figures
	nodes := map[figures]bitmask.NodeSet{}
	for i, id := range s.m.ids {
		var f figures
		if ok {
			t := s.m.tables[i][col]
			f = figures{t.Free, t.Allocatable}
		}
		if _, seen := nodes[f]; !seen {
			order = append(order, f)
		}
		nodes[f] = nodes[f].Add(id)
	}
	var b strings.Builder
	b.WriteString(string(name) + ": asked " + units.FormatBytes(asked) + ", free ")
	for i, f := range order {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(units.FormatBytes(f.free))
		if f.allocatable != f.free {
			b.WriteString(" (of " + units.FormatBytes(f.allocatable) + ")")
		}
		if set := nodes[f]; set.Len() == 1 {
			b.WriteString(" on node " + set.String())
		} else {
			b.WriteString(" on nodes " + set.String())
		}
	}
	if size, hugepages := strings.CutPrefix(string(name), "hugepages-"); hugepages && !ok {
		b.WriteString(" (the partition has no " + size + " pages: host.hugepages)")
	}
	return b.String()
}
