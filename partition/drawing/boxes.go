package drawing

import (
	"fmt"
	"math"
)

// cardBox lays out a card: heading, lines, table, NUMA nodes, and the
// CPUs no node lists, each CPU cell cw wide.
func cardBox(cd card, cw int) *box {
	s := newStack(&box{class: "card", fill: "#ffffff", stroke: cd.color})
	s.line("head", cd.head, wrapAt*11/13)
	for _, l := range cd.lines {
		s.line("text", l, wrapAt)
	}
	for _, l := range cd.table {
		s.line("table", l, 0)
	}
	for _, n := range cd.nodes {
		s.place(nodeBox(n, cw))
	}
	if len(cd.orphans) > 0 {
		s.line("text", "CPUs no NUMA node lists", wrapAt)
		s.grid(cells(cd.orphans, cw), cw)
	}
	b := s.done()
	stretch(b, b.w)
	return b
}

// nodeBox lays out one NUMA node.
func nodeBox(n nodeView, cw int) *box {
	b := &box{class: "numa", fill: "#fafafa", stroke: "#888888"}
	if n.excluded {
		b.fill = excludedColor
	}
	s := newStack(b)
	s.line("node", n.head, wrapAt*11/12)
	for _, l := range n.lines {
		s.line("text", l, wrapAt)
	}
	s.grid(cells(n.cpus, cw), cw)
	return s.done()
}

// cells are CPU squares with their id, coloured by owner.
func cells(cpus []cpuView, cw int) []*box {
	out := make([]*box, 0, len(cpus))
	for _, c := range cpus {
		out = append(out, &box{w: cw, h: cellH, class: "cpu", fill: c.color,
			title: fmt.Sprintf("CPU %d: %s", c.id, c.owner),
			texts: []text{{x: cw / 2, y: cellH/2 + 3, class: "id", s: fmt.Sprint(c.id), middle: true}}})
	}
	return out
}

// cellWidth fits the longest CPU id of the picture.
func cellWidth(c content) int {
	digits := 1
	for _, cd := range c.cards {
		for _, n := range cd.nodes {
			for _, cpu := range n.cpus {
				digits = max(digits, len(fmt.Sprint(cpu.id)))
			}
		}
		for _, cpu := range cd.orphans {
			digits = max(digits, len(fmt.Sprint(cpu.id)))
		}
	}
	return max(cellH, int(math.Ceil(float64(digits)*fonts["id"].size*glyphEm))+6)
}
