package drawing

import (
	"math"
	"unicode/utf8"
)

// The layout model: boxes holding text and boxes, sized from their
// content. Text is set in a monospace font, so a line's width is its
// length times one glyph's advance and no text need leave its box.

// font is a text class's size in pixels and weight.
type font struct {
	size float64
	bold bool
}

var fonts = map[string]font{
	"title": {16, true}, "head": {13, true}, "node": {12, true},
	"text": {11, false}, "table": {11, false}, "id": {9, false},
}

// fontFamily is the monospace family the estimates hold for: DejaVu Sans
// Mono (and Liberation Mono, Courier) advance 0.60 em per glyph, regular
// and bold alike; glyphEm leaves room over that.
const (
	fontFamily = "DejaVu Sans Mono, Liberation Mono, monospace"
	glyphEm    = 0.62
	ascentEm   = 0.80 // above the baseline
	descentEm  = 0.25 // below it
)

// Spacing, in pixels.
const (
	pad     = 10 // inside a box
	gap     = 6  // between boxes in a box
	cardGap = 14 // between cards
	cellH   = 22 // a CPU's square
	cellGap = 3
	perRow  = 16 // CPUs per row of a NUMA node
	wrapAt  = 60 // glyphs per line of text before it wraps
)

// text is one line at baseline y; middle centres it on x.
type text struct {
	x, y   int
	class  string
	s      string
	middle bool
}

// width is the advance of s in class's font.
func width(class, s string) float64 {
	return float64(utf8.RuneCountInString(s)) * fonts[class].size * glyphEm
}

// lineHeight is the room a line of class takes.
func lineHeight(class string) int { return int(math.Ceil(fonts[class].size * 1.4)) }

// baseline is where a line whose room starts at top is set.
func baseline(class string, top int) int {
	return top + int(math.Ceil(fonts[class].size*ascentEm)) + 1
}

// extent is the rectangle t's glyphs may cover.
func (t text) extent() (x0, y0, x1, y1 float64) {
	f := fonts[t.class].size
	w := width(t.class, t.s)
	x0 = float64(t.x)
	if t.middle {
		x0 -= w / 2
	}
	return x0, float64(t.y) - f*ascentEm, x0 + w, float64(t.y) + f*descentEm
}

// box is a rectangle at (x, y) of its parent. An empty class draws
// nothing of its own (a group).
type box struct {
	x, y, w, h   int
	class        string // canvas, card, numa, cpu
	fill, stroke string
	title        string // tooltip
	texts        []text
	kids         []*box
}

// stack fills a box top to bottom.
type stack struct {
	b *box
	y int
}

func newStack(b *box) *stack { return &stack{b: b, y: pad} }

// line adds text, wrapped at limit glyphs (0: never).
func (s *stack) line(class, str string, limit int) {
	for _, l := range wrap(str, limit) {
		s.b.texts = append(s.b.texts, text{x: pad, y: baseline(class, s.y), class: class, s: l})
		s.b.w = max(s.b.w, 2*pad+int(math.Ceil(width(class, l))))
		s.y += lineHeight(class)
	}
}

// place adds box k below what is there.
func (s *stack) place(k *box) {
	s.y += gap / 2
	k.x, k.y = pad, s.y
	s.b.kids = append(s.b.kids, k)
	s.b.w = max(s.b.w, 2*pad+k.w)
	s.y += k.h + gap/2
}

// grid adds cells of width cw, perRow a row.
func (s *stack) grid(cells []*box, cw int) {
	if len(cells) == 0 {
		return
	}
	s.y += gap / 2
	for i, c := range cells {
		c.x, c.y = pad+(i%perRow)*(cw+cellGap), s.y+(i/perRow)*(cellH+cellGap)
		s.b.kids = append(s.b.kids, c)
	}
	cols := min(len(cells), perRow)
	rows := (len(cells) + perRow - 1) / perRow
	s.b.w = max(s.b.w, 2*pad+cols*(cw+cellGap)-cellGap)
	s.y += rows*(cellH+cellGap) - cellGap + gap/2
}

func (s *stack) done() *box {
	s.b.h = s.y + pad
	return s.b
}

// stretch widens b to w and its framed kids to its inside.
func stretch(b *box, w int) {
	b.w = max(b.w, w)
	for _, k := range b.kids {
		if k.class == "numa" {
			k.w = b.w - 2*pad
		}
	}
}

// wrap cuts s into lines of at most limit glyphs, after a space or comma
// where there is one, continuing indented.
func wrap(s string, limit int) []string {
	r := []rune(s)
	if limit <= 0 || len(r) <= limit {
		return []string{s}
	}
	limit = max(limit, 8) // room to progress past the indent
	var out []string
	const cont = "  "
	for len(r) > limit {
		cut := limit
		for i := limit; i > limit/3; i-- {
			if r[i-1] == ' ' || r[i-1] == ',' {
				cut = i
				break
			}
		}
		out = append(out, trimRight(string(r[:cut])))
		r = append([]rune(cont), trimLeft(r[cut:])...)
	}
	return append(out, string(r))
}

func trimRight(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

func trimLeft(r []rune) []rune {
	for len(r) > 0 && r[0] == ' ' {
		r = r[1:]
	}
	return r
}
