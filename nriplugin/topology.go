package nriplugin

import (
	"fmt"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// TopologyOf is a planned partition's pod CPUs by physical core, from the
// machine's topology: the cores the plugin hands out whole.
func TopologyOf(p planner.Partition, t *numa.Topology) (CPUTopology, error) {
	var out CPUTopology
	covered := p.CPUs
	for _, s := range t.Sockets {
		for _, c := range s.Cores {
			cpus := c.CPUs.Intersect(p.CPUs)
			if cpus.IsEmpty() {
				continue
			}
			out.Cores = append(out.Cores, Core{Node: c.Node, CPUs: cpus})
			covered = covered.Difference(cpus)
		}
	}
	// CPUs in no core record (old kernels) are cores of their own.
	for _, id := range covered.IDs() {
		node := -1
		for _, n := range t.Nodes {
			if n.CPUs.Has(id) {
				node = n.ID
			}
		}
		if node < 0 {
			return out, fmt.Errorf("partition %s: CPU %d is on no NUMA node", p.Name, id)
		}
		out.Cores = append(out.Cores, Core{Node: node, CPUs: bitmask.NewCPUSet(id)})
	}
	out.Distances = map[int]map[int]int{}
	for _, a := range p.Nodes.IDs() {
		out.Distances[a] = map[int]int{}
		for _, b := range p.Nodes.IDs() {
			if d, ok := t.Distance(a, b); ok {
				out.Distances[a][b] = d
			}
		}
	}
	return out, nil
}
