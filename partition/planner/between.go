package planner

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Between is the plan on the way from prev to next in which the
// partitions take names are next's and the others still prev's: the
// state a rolling apply leaves after the Nodes of take were drained,
// restarted and let back in, one wave at a time, so that a Deployment
// spread over the partitions keeps serving (#25).
//
// That state exists only when a partition's settings are all that
// changes: the same host (reserved CPUs, excluded nodes, shares), the
// same network, the same partitions in the same order on the same NUMA
// nodes and CPUs under the same Node names. Otherwise Between says why,
// and the change is applied to every partition at once. It is pure;
// neither plan is changed.
func Between(prev, next *Plan, take func(partition string) bool) (*Plan, error) {
	if len(prev.Partitions) != len(next.Partitions) {
		return nil, fmt.Errorf("the number of partitions changes (%d → %d)", len(prev.Partitions), len(next.Partitions))
	}
	if prev.Hostname != next.Hostname {
		return nil, fmt.Errorf("the host name changes (%q → %q)", prev.Hostname, next.Hostname)
	}
	if !sameJSON(prev.Host, next.Host) {
		return nil, fmt.Errorf("the host's share changes (reserved CPUs, memory nodes, excluded nodes or shares)")
	}
	if !sameJSON(prev.Network, next.Network) {
		return nil, fmt.Errorf("the network changes")
	}
	out := *next
	out.Partitions = slices.Clone(next.Partitions)
	out.Warnings = slices.Clone(next.Warnings)
	for i, n := range next.Partitions {
		p := prev.Partitions[i]
		switch {
		case p.Name != n.Name:
			return nil, fmt.Errorf("partition %d is %s, was %s", i, n.Name, p.Name)
		case p.NodeName != n.NodeName:
			return nil, fmt.Errorf("partition %s: its Node name changes (%s → %s)", n.Name, p.NodeName, n.NodeName)
		case p.Nodes != n.Nodes || !p.CPUs.Equal(n.CPUs) || p.MemoryNodes != n.MemoryNodes || !p.HostReservedCPUs.Equal(n.HostReservedCPUs):
			return nil, fmt.Errorf("partition %s: its NUMA nodes or CPUs change", n.Name)
		case !sameJSON(p.Network, n.Network):
			return nil, fmt.Errorf("partition %s: its network changes", n.Name)
		}
		if !take(n.Name) {
			out.Partitions[i] = p
		}
	}
	return &out, nil
}

// BetweenFile is Between from a plan file's content (name is its path,
// for errors): a rolling apply gets the plan the host runs as the file
// the last apply installed, which it rendered from a plan the planner's
// rules held (DecodePlan: they are not this file's to check again).
func BetweenFile(name string, prev []byte, next *Plan, take func(partition string) bool) (*Plan, error) {
	p, err := DecodePlan(name, prev)
	if err != nil {
		return nil, err
	}
	return Between(p, next, take)
}

// sameJSON compares two plan parts as the plan file has them.
func sameJSON(a, b any) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && string(ja) == string(jb)
}
