// Package nodecondition writes a partition's NumaPartitionDrifted
// condition on its Node, as node-problem-detector writes its own (#40):
// the partition's allocator daemon checks every minute that its slice
// runs on the planned CPUs and memory nodes and that its NUMA nodes'
// hugepage pools hold their planned pages, and patches the verdict onto
// its Node with the partition kubelet's credentials. The verdict is a
// pure function of what was read (Verdict); Run reads, patches and
// retries. The rules themselves are slices/drift's, which status uses.
package nodecondition

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/internal/echo"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/drift"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

// Type is the condition's type. Like MemoryPressure, True is the
// problem.
const Type corev1.NodeConditionType = "NumaPartitionDrifted"

// The condition's reasons.
const (
	ReasonAsPlanned        = "AsPlanned"
	ReasonCpusetDrifted    = "CpusetDrifted"
	ReasonHugepagesDrifted = "HugepagesDrifted"
	ReasonDrifted          = "Drifted" // both
)

// maxListed bounds the differences a message names: a Node condition is
// read in kubectl describe, and the count of the rest says enough.
const maxListed = 8

// Plan is what the plan gives the partition: its slice's CPUs and memory
// nodes (as rendered in its AllowedCPUs=/AllowedMemoryNodes=) and the
// hugepage pools of its NUMA nodes.
type Plan struct {
	Slice string
	CPUs  bitmask.CPUSet
	Mems  bitmask.NodeSet
	Pools []hugepool.Pool
}

// Observed is what one check read.
type Observed struct {
	// Cpuset is the slice's effective cpuset; a set not read is "".
	Cpuset drift.Cpuset
	// Nodes are the NUMA nodes' pools by node id; NodesErr says why they
	// were not read.
	Nodes    map[int][]numa.Hugepages
	NodesErr error
}

// Verdict is the condition for what was observed, without its times
// (kubeapi.SetNodeCondition sets them). A set of the slice that could not
// be read, or pools that could not be read, are differences: the daemon
// runs in that slice, on that machine, so both are there to read.
func Verdict(p Plan, o Observed) corev1.NodeCondition {
	var cpuset, pools []string
	for _, d := range drift.CpusetDifferences(p.Slice, p.CPUs, p.Mems, o.Cpuset) {
		cpuset = append(cpuset, fmt.Sprintf("%s: planned %s, now %s", d.What, d.Planned, d.Now))
	}
	if o.Cpuset.CPUs == "" {
		cpuset = append(cpuset, fmt.Sprintf("CPUs: planned %s, now unreadable", p.CPUs))
	}
	if o.Cpuset.Mems == "" && !p.Mems.IsEmpty() {
		cpuset = append(cpuset, fmt.Sprintf("memory nodes: planned %s, now unreadable", p.Mems))
	}
	if o.NodesErr != nil {
		pools = append(pools, fmt.Sprintf("hugepage pools unreadable: %s", echo.Value(o.NodesErr.Error())))
	} else {
		nodes := o.Nodes
		for _, d := range drift.PoolDifferences(p.Pools, nodes) {
			pools = append(pools, d.String())
		}
		for _, pl := range p.Pools {
			if _, ok := nodes[pl.Node]; !ok {
				pools = append(pools, fmt.Sprintf("node%d: not found in sysfs", pl.Node))
			}
		}
	}
	c := corev1.NodeCondition{Type: Type, Status: corev1.ConditionTrue}
	switch {
	case len(cpuset) == 0 && len(pools) == 0:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonAsPlanned
		c.Message = fmt.Sprintf("slice %s runs on the planned CPUs %s and memory nodes %s; %s",
			p.Slice, p.CPUs, orAny(p.Mems), poolsChecked(p.Pools))
		return c
	case len(pools) == 0:
		c.Reason = ReasonCpusetDrifted
	case len(cpuset) == 0:
		c.Reason = ReasonHugepagesDrifted
	default:
		c.Reason = ReasonDrifted
	}
	var parts []string
	if len(cpuset) > 0 {
		parts = append(parts, "slice "+p.Slice+": "+list(cpuset))
	}
	if len(pools) > 0 {
		parts = append(parts, "hugepages: "+list(pools))
	}
	c.Message = strings.Join(parts, "; ")
	return c
}

func orAny(s bitmask.NodeSet) string {
	if s.IsEmpty() {
		return "(any)"
	}
	return s.String()
}

// poolsChecked says which pools were checked.
func poolsChecked(pools []hugepool.Pool) string {
	if len(pools) == 0 {
		return "no hugepage pool is planned on its NUMA nodes"
	}
	return fmt.Sprintf("its NUMA nodes' %d planned hugepage pools hold their planned pages", len(pools))
}

// list joins at most maxListed items and counts the rest.
func list(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxListed], ", "), len(items)-maxListed)
}
