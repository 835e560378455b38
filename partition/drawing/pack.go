package drawing

// layout places the whole picture: title and caption over the cards,
// packed in columns so that the canvas fits them with little left empty.
func layout(c content) *box {
	cw := cellWidth(c)
	cards := make([]*box, 0, len(c.cards))
	for _, cd := range c.cards {
		cards = append(cards, cardBox(cd, cw))
	}
	s := newStack(&box{class: "canvas", fill: "#ffffff"})
	s.line("title", c.title, 0)
	for _, l := range c.caption {
		s.line("text", l, 0)
	}
	s.place(columns(cards))
	return s.done()
}

// packing is cards in k columns: each card goes under the shortest
// column so far (the leftmost of equals), a column as wide as its widest.
type packing struct {
	col, y []int // per card
	colW   []int
	w, h   int
}

func pack(cards []*box, k int) packing {
	p := packing{col: make([]int, len(cards)), y: make([]int, len(cards)), colW: make([]int, k)}
	heights := make([]int, k)
	for i, c := range cards {
		shortest := 0
		for j := range heights {
			if heights[j] < heights[shortest] {
				shortest = j
			}
		}
		p.col[i], p.y[i] = shortest, heights[shortest]
		heights[shortest] += c.h + cardGap
		p.colW[shortest] = max(p.colW[shortest], c.w)
	}
	for j := range heights {
		p.w += p.colW[j]
		p.h = max(p.h, heights[j]-cardGap)
	}
	p.w += (k - 1) * cardGap
	return p
}

// columns groups the cards in the number of columns that best fits a
// 16:10 screen and leaves least of the canvas empty: the smallest
// max(width, 1.6 × height) divided by the share the cards cover.
func columns(cards []*box) *box {
	area := 0
	for _, c := range cards {
		area += c.w * c.h
	}
	var best packing
	score := -1.0
	for k := 1; k <= len(cards); k++ {
		p := pack(cards, k)
		covered := float64(area) / float64(p.w*p.h)
		if s := float64(max(10*p.w, 16*p.h)) / covered; score < 0 || s < score {
			best, score = p, s
		}
	}
	g := &box{w: best.w, h: best.h}
	x := make([]int, len(best.colW))
	for j := 1; j < len(x); j++ {
		x[j] = x[j-1] + best.colW[j-1] + cardGap
	}
	for i, c := range cards {
		c.x, c.y = x[best.col[i]], best.y[i]
		stretch(c, best.colW[best.col[i]])
		g.kids = append(g.kids, c)
	}
	return g
}
