package drawing

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// DOT writes the same picture as SVG for Graphviz (dot -Tsvg): a cluster
// per socket, one per NUMA node inside it, a filled box per CPU.
func DOT(w io.Writer, plan *planner.Plan, topo *numa.Topology) error {
	m := gather(plan, topo)
	var b strings.Builder
	fmt.Fprintf(&b, "graph machine {\n  label=%s;\n  labelloc=t;\n  fontname=\"sans-serif\";\n", quote(fmt.Sprintf("%s: %d partitions", plan.Hostname, len(plan.Partitions))))
	b.WriteString("  node [shape=box, style=filled, fontname=\"sans-serif\", fontsize=9, width=0.3, height=0.3, fixedsize=true];\n")
	cluster := func(indent, name, label string, nodes []numa.Node) {
		fmt.Fprintf(&b, "%ssubgraph %s {\n%s  label=%s;\n", indent, name, indent, quote(label))
		for _, n := range nodes {
			color := "black"
			if p, ok := m.owner[n.ID]; ok {
				color = fill(*p)
			}
			fmt.Fprintf(&b, "%s  subgraph cluster_node%d {\n%s    label=%s;\n%s    color=%s;\n%s    penwidth=2;\n",
				indent, n.ID, indent, quote(strings.Join(append([]string{m.nodeLabel(n)}, m.memoryLines(n)...), "\n")), indent, quote(color), indent)
			if len(n.CPUs.IDs()) == 0 {
				// Graphviz draws no empty cluster.
				fmt.Fprintf(&b, "%s    mem%d [label=\"\", style=invis];\n", indent, n.ID)
			}
			for _, cpu := range n.CPUs.IDs() {
				owner, fc := m.cpuOwner(cpu)
				fmt.Fprintf(&b, "%s    cpu%d [label=\"%d\", fillcolor=%s, tooltip=%s];\n", indent, cpu, cpu, quote(fc), quote("CPU "+strconv.Itoa(cpu)+": "+owner))
			}
			fmt.Fprintf(&b, "%s  }\n", indent)
		}
		fmt.Fprintf(&b, "%s}\n", indent)
	}
	for _, s := range m.sockets {
		cluster("  ", fmt.Sprintf("cluster_socket%d", s.ID), fmt.Sprintf("socket %d", s.ID), m.socketNodes(s))
	}
	if len(m.loose) > 0 {
		cluster("  ", "cluster_loose", "NUMA nodes without CPUs", m.loose)
	}
	b.WriteString("  subgraph cluster_legend {\n    label=\"legend\";\n    node [shape=plaintext, style=\"\", fixedsize=false];\n")
	for i, e := range m.legend() {
		fmt.Fprintf(&b, "    legend%d [label=%s, fontcolor=%s];\n", i, quote(e.text), quote(e.color))
	}
	b.WriteString("  }\n}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// quote is a DOT string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
