package drawing

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/numa-partition/numa-partition/partition/planner"
)

// partitionCard is partition p's Node as the plan makes it: name,
// address, CPUs, labels, taints, allocatable (Picture.Allocatable: what
// `plan` prints) and the network devices its namespace holds.
func partitionCard(p *planner.Partition, alloc map[string]string) (card, error) {
	cd := card{color: fill(*p), head: fmt.Sprintf("partition %s (%s)", p.Name, p.Color)}
	cd.lines = append(cd.lines, "Node "+p.NodeName)
	if n := p.Network; n != nil {
		cd.lines = append(cd.lines, fmt.Sprintf("address %s in netns %s", n.Address, n.Namespace))
		if len(n.Devices) > 0 {
			var devs []string
			for _, d := range n.Devices {
				devs = append(devs, d.Name)
			}
			cd.lines = append(cd.lines, "moves in "+strings.Join(devs, ", "))
		}
	}
	cpus := "CPUs " + orNone(p.CPUs.String())
	if !p.HostReservedCPUs.IsEmpty() {
		cpus += ", host keeps " + p.HostReservedCPUs.String()
	}
	cd.lines = append(cd.lines, cpus)

	keys := make([]string, 0, len(p.Labels))
	for k := range p.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cd.lines = append(cd.lines, "labels:")
	for _, k := range keys {
		cd.lines = append(cd.lines, "  "+k+"="+p.Labels[k])
	}
	if len(p.Taints) == 0 {
		cd.lines = append(cd.lines, "taints: none")
	} else {
		cd.lines = append(cd.lines, "taints:")
		for _, t := range p.Taints {
			cd.lines = append(cd.lines, "  "+t.String())
		}
	}

	if alloc == nil {
		return cd, fmt.Errorf("partition %s: the picture has no allocatable for its Node", p.Name)
	}
	cd.lines = append(cd.lines, "allocatable:")
	cd.lines = append(cd.lines, indent(allocatable(alloc))...)
	cd.lines = append(cd.lines, fmt.Sprintf("  pods %d", p.Kubelet.MaxPods))
	return cd, nil
}

// allocatable are a Node's resources, one a line: cpu, memory, hugepages
// by size, the rest by name; sizes for people.
func allocatable(res map[string]string) []string {
	names := make([]string, 0, len(res))
	for name := range res {
		names = append(names, name)
	}
	rank := func(n string) int {
		switch {
		case n == "cpu":
			return 0
		case n == "memory":
			return 1
		case strings.HasPrefix(n, "hugepages-"):
			return 2
		}
		return 3
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		if rank(a) == 2 {
			return pageSize(a) < pageSize(b)
		}
		return a < b
	})
	var out []string
	for _, n := range names {
		v := res[n]
		if n != "cpu" {
			if q, err := resource.ParseQuantity(v); err == nil && q.Value() > 0 {
				v = size(uint64(q.Value()))
			}
		}
		out = append(out, n+" "+v)
	}
	return out
}

// pageSize is the bytes of a hugepages-<size> resource, 0 when unreadable.
func pageSize(name string) int64 {
	q, err := resource.ParseQuantity(strings.TrimPrefix(name, "hugepages-"))
	if err != nil {
		return 0
	}
	return q.Value()
}
