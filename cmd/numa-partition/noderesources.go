package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/numa-partition/numa-partition/kubeletgen"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// nodeResources is what every partition's Node will publish.
func nodeResources(plan *planner.Plan) ([]kubeletgen.NodeResources, error) {
	out := make([]kubeletgen.NodeResources, 0, len(plan.Partitions))
	for i := range plan.Partitions {
		r, err := kubeletgen.Resources(plan, &plan.Partitions[i])
		if err != nil {
			return nil, fmt.Errorf("partition %s: %w", plan.Partitions[i].Name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// writeNodeResources prints each Node's capacity and allocatable next to
// its partition's share, one resource a line.
func writeNodeResources(w io.Writer, nodes []kubeletgen.NodeResources) error {
	var b strings.Builder
	b.WriteString("\nEach Node as kubelet will publish it (capacity, allocatable) next to the partition's share:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tRESOURCE\tCAPACITY\tALLOCATABLE\tSHARE")
	for _, n := range nodes {
		names := make([]string, 0, len(n.Capacity))
		for name := range n.Capacity {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", n.NodeName, name, n.Capacity[name], n.Allocatable[name], n.Share[name])
			if n.Allocatable[name] != n.Share[name] {
				line += "\t≠ share"
			}
			fmt.Fprintln(tw, line)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range nodes {
		if n.WholeMachine != "" {
			fmt.Fprintf(&b, "%s's capacity is the whole machine's: %s\n", n.NodeName, n.WholeMachine)
		}
		if n.ShownHostCPUs != "" {
			fmt.Fprintf(&b, "%s's capacity cpu counts the host's CPUs %s, which its kubelet reserves (its static CPU Manager needs a reserved CPU, and none of the host's lies on its nodes)\n", n.NodeName, n.ShownHostCPUs)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
