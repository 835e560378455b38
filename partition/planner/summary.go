package planner

import (
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// MachineSummary is a machine as the planner reads it, for what
// describes a machine to its user (`config init`, package configref)
// without planning it: the planner's own reading, not a second one.
type MachineSummary struct {
	Nodes    bitmask.NodeSet // every node id
	CPUNodes bitmask.NodeSet // the nodes with online CPUs
	Online   bitmask.CPUSet  // online CPUs
	// AutoReservedCPUs are what host.reserved_cpus = "auto" reserves.
	AutoReservedCPUs bitmask.CPUSet
	// Memory is each node's MemTotal.
	Memory map[int]uint64
}

// Summarize is t as the planner reads it.
func Summarize(t *numa.Topology) MachineSummary {
	m := newMachine(t)
	return MachineSummary{Nodes: m.nodes, CPUNodes: m.cpuNodes(), Online: m.online,
		AutoReservedCPUs: autoReservedCPUs(m, nil, func(string, ...any) {}), Memory: m.memory}
}
