package planner

import (
	"slices"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa"
)

// Figures are what a plan took from the machine that moves between boots
// of one host with nothing changed on it: each NUMA node's memory
// (MemTotal: the firmware and the kernel keep a little more or less at
// each boot; the e2e's VM moved 44 MiB between its nodes) and the pid
// limit, min(pid_max, threads-max), whose threads-max the kernel
// derives from the memory (on a host under 512 GiB it is the smaller).
// A reviewed plan is the operator's decisions on these figures: planned
// again with them, it must come out the same, and then its decisions
// stand with the figures of today (apply --plan after a reboot).
type Figures struct {
	// NodeMemory is MemTotal by node, for the nodes the plan describes.
	NodeMemory map[int]uint64
	// TaskLimit is the pid limit; 0 when the plan was made without host
	// facts.
	TaskLimit uint64
}

// FiguresOf are the figures plan was made with.
func FiguresOf(plan *Plan) Figures {
	f := Figures{NodeMemory: map[int]uint64{}}
	for _, p := range plan.Partitions {
		for _, m := range p.Memory {
			f.NodeMemory[m.Node] = m.TotalBytes
		}
		if p.PIDs != nil {
			f.TaskLimit = p.PIDs.Limit
		}
	}
	for _, m := range plan.Host.ExcludedMemory {
		f.NodeMemory[m.Node] = m.TotalBytes
	}
	return f
}

// Topology is t with f's node memory, t unchanged.
func (f Figures) Topology(t *numa.Topology) *numa.Topology {
	out := *t
	out.Nodes = slices.Clone(t.Nodes)
	for i := range out.Nodes {
		if b, ok := f.NodeMemory[out.Nodes[i].ID]; ok {
			out.Nodes[i].MemoryBytes = b
		}
	}
	return &out
}

// Facts are facts with f's pid limit, when f has one.
func (f Figures) Facts(facts HostFacts) HostFacts {
	if facts == nil || f.TaskLimit == 0 {
		return facts
	}
	return figuresFacts{HostFacts: facts, taskLimit: f.TaskLimit}
}

// figuresFacts answers the pid limit of Figures and the rest as the
// facts it wraps, their optional answers included (a wrapped FixedFacts
// still says its cgroup mode and interfaces; not saying them is
// answering none, as the planner reads them).
type figuresFacts struct {
	HostFacts
	taskLimit uint64
}

func (f figuresFacts) TaskLimit() (uint64, error) { return f.taskLimit, nil }

func (f figuresFacts) CgroupMode() (cgroupmode.Mode, error) {
	if c, ok := f.HostFacts.(CgroupFacts); ok {
		return c.CgroupMode()
	}
	return "", nil
}

func (f figuresFacts) Interfaces() ([]Interface, error) {
	if n, ok := f.HostFacts.(NetworkFacts); ok {
		return n.Interfaces()
	}
	return nil, nil
}
