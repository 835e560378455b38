package drawing

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// Layout, in pixels.
const (
	cell      = 22 // a CPU's square
	gap       = 3
	pad       = 10
	line      = 15 // a text line
	perRow    = 16 // CPUs per row in a node
	title     = 28
	socketGap = 16
)

// SVG draws the plan over its machine as a standalone SVG document.
func SVG(w io.Writer, plan *planner.Plan, topo *numa.Topology) error {
	m := gather(plan, topo)
	var body bytes.Buffer
	y := title + pad
	width := 0
	row := func(label string, nodes []numa.Node) {
		x := pad
		h := 0
		fmt.Fprintf(&body, `<text x="%d" y="%d" class="socket">%s</text>`+"\n", x, y+line-3, esc(label))
		for _, n := range nodes {
			nw, nh := m.svgNode(&body, n, x, y+line+gap)
			x += nw + gap*3
			h = max(h, nh)
		}
		width = max(width, x)
		y += line + gap + h + socketGap
	}
	for _, s := range m.sockets {
		row(fmt.Sprintf("socket %d · CPUs %s", s.ID, orNone(s.CPUs.String())), m.socketNodes(s))
	}
	if len(m.loose) > 0 {
		row("NUMA nodes without CPUs", m.loose)
	}
	for _, e := range m.legend() {
		fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" class="cpu"/>`+"\n", pad, y, line-2, line-2, e.color)
		fmt.Fprintf(&body, `<text x="%d" y="%d" class="legend">%s</text>`+"\n", pad+line+4, y+line-4, esc(e.text))
		y += line + gap
	}
	width = max(width, 640)
	height := y + pad
	_, err := fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">
<style>
.title{font-size:16px;font-weight:bold} .socket{font-size:13px;font-weight:bold} .node{font-size:12px;font-weight:bold}
.mem{font-size:11px} .legend{font-size:12px} .id{font-size:9px;text-anchor:middle}
.box{fill:#fafafa;stroke:#888} .cpu{stroke:#555;stroke-width:0.5}
</style>
<rect width="100%%" height="100%%" fill="#ffffff"/>
<text x="%d" y="%d" class="title">%s</text>
%s</svg>
`, width, height, width, height, pad, title-6, esc(fmt.Sprintf("%s: %d partitions", plan.Hostname, len(plan.Partitions))), body.String())
	return err
}

// svgNode draws one NUMA node's box at (x, y) and returns its size.
func (m machine) svgNode(b *bytes.Buffer, n numa.Node, x, y int) (w, h int) {
	cpus := n.CPUs.IDs()
	cols := min(max(len(cpus), 1), perRow)
	rows := (len(cpus) + perRow - 1) / perRow
	lines := append([]string{m.nodeLabel(n)}, m.memoryLines(n)...)
	w = max(2*pad+cols*(cell+gap)-gap, 210)
	h = pad + len(lines)*line + gap + rows*(cell+gap) + pad
	class := "box"
	style := ""
	if p, ok := m.owner[n.ID]; ok {
		style = fmt.Sprintf(` style="stroke:%s;stroke-width:3"`, fill(*p))
	} else if m.plan.Host.ExcludedNodes.Has(n.ID) {
		style = fmt.Sprintf(` style="fill:%s"`, excludedColor)
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" rx="6" class="%s"%s/>`+"\n", x, y, w, h, class, style)
	for i, l := range lines {
		cls := "mem"
		if i == 0 {
			cls = "node"
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" class="%s">%s</text>`+"\n", x+pad, y+pad+(i+1)*line-4, cls, esc(l))
	}
	top := y + pad + len(lines)*line + gap
	for i, cpu := range cpus {
		cx, cy := x+pad+(i%perRow)*(cell+gap), top+(i/perRow)*(cell+gap)
		owner, color := m.cpuOwner(cpu)
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" class="cpu"><title>CPU %d: %s</title></rect>`+"\n",
			cx, cy, cell, cell, color, cpu, esc(owner))
		fmt.Fprintf(b, `<text x="%d" y="%d" class="id">%d</text>`+"\n", cx+cell/2, cy+cell/2+3, cpu)
	}
	return w, h
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
