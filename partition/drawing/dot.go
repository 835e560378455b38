package drawing

import (
	"fmt"
	"io"
	"strings"
)

// DOT writes the same content as SVG for Graphviz (dot -Tsvg): a cluster
// per card, one per NUMA node inside it, a filled box per CPU; the
// distances are a plaintext node of their card.
func DOT(w io.Writer, pic Picture) error {
	c, err := gather(pic)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "graph machine {\n  label=%s;\n  labelloc=t;\n  labeljust=l;\n  nodesep=0.05;\n  ranksep=0.05;\n  fontname=%q;\n", quote(append([]string{c.title}, c.caption...)), fontFamily)
	fmt.Fprintf(&b, "  node [shape=box, style=filled, fontname=%q, fontsize=9, width=0.3, height=0.3, fixedsize=true];\n", fontFamily)
	for i, cd := range c.cards {
		fmt.Fprintf(&b, "  subgraph cluster_card%d {\n    label=%s;\n    labeljust=l;\n    color=%q;\n    penwidth=3;\n", i, quote(append([]string{cd.head}, cd.lines...)), cd.color)
		if len(cd.table)+len(cd.nodes)+len(cd.orphans) == 0 {
			// Graphviz draws no empty cluster.
			fmt.Fprintf(&b, "    card%d [label=\"\", style=invis];\n", i)
		}
		if len(cd.table) > 0 {
			fmt.Fprintf(&b, "    table%d [shape=plaintext, style=\"\", fixedsize=false, fontsize=11, label=%s];\n", i, quote(cd.table))
		}
		for _, n := range cd.nodes {
			color := "#888888"
			if n.excluded {
				color = excludedColor
			}
			fmt.Fprintf(&b, "    subgraph cluster_node%d {\n      label=%s;\n      labeljust=l;\n      color=%q;\n", n.id, quote(append([]string{n.head}, n.lines...)), color)
			if len(n.cpus) == 0 {
				// Graphviz draws no empty cluster.
				fmt.Fprintf(&b, "      mem%d [label=\"\", style=invis];\n", n.id)
			}
			dotCPUs(&b, "      ", n.cpus)
			b.WriteString("    }\n")
		}
		dotCPUs(&b, "    ", cd.orphans)
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// dotCPUs are CPU boxes, perRow a row like the SVG's: an invisible edge
// from each CPU to the one below it puts them on successive ranks.
func dotCPUs(b *strings.Builder, indent string, cpus []cpuView) {
	for _, c := range cpus {
		fmt.Fprintf(b, "%scpu%d [label=\"%d\", fillcolor=%q, tooltip=%s];\n", indent, c.id, c.id, c.color, quote([]string{fmt.Sprintf("CPU %d: %s", c.id, c.owner)}))
	}
	for i := perRow; i < len(cpus); i++ {
		fmt.Fprintf(b, "%scpu%d -- cpu%d [style=invis];\n", indent, cpus[i-perRow].id, cpus[i].id)
	}
}

// quote is a DOT string of left-justified lines.
func quote(lines []string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\l`)
	var b strings.Builder
	b.WriteString(`"`)
	for _, l := range lines {
		b.WriteString(r.Replace(l))
		if len(lines) > 1 {
			b.WriteString(`\l`)
		}
	}
	b.WriteString(`"`)
	return b.String()
}
