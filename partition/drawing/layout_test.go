package drawing

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bounds of any picture, in pixels: the 256-CPU POWER dump drew every
// NUMA node once per socket, 8978 pixels tall.
const (
	maxWidth  = 2600
	maxHeight = 4000
	// minFilled is the least share of the canvas its cards cover.
	minFilled = 0.6
)

// On the layout model of every picture: each text's extent lies inside
// its box, each box inside its parent, no two boxes of a parent overlap,
// the canvas is within bounds and mostly covered by cards, and every
// online CPU has exactly one cell.
func TestLayoutKeepsEverythingInItsBox(t *testing.T) {
	for _, p := range allPictures(t) {
		t.Run(p.name, func(t *testing.T) {
			c, err := gather(p.pic)
			require.NoError(t, err)
			root := layout(c)
			checkBox(t, root, "canvas")
			assert.Less(t, root.w, maxWidth)
			assert.Less(t, root.h, maxHeight)

			cells := map[int]int{}
			cardArea := 0
			walk(root, func(b *box) {
				if b.class == "card" {
					cardArea += b.w * b.h
				}
				if b.class == "cpu" {
					var id int
					_, err := fmt.Sscanf(b.title, "CPU %d:", &id)
					require.NoError(t, err, b.title)
					cells[id]++
				}
			})
			for _, cpu := range p.pic.Topology.Online.IDs() {
				assert.Equal(t, 1, cells[cpu], "CPU %d's cells", cpu)
			}
			assert.Len(t, cells, p.pic.Topology.Online.Len(), "only online CPUs are drawn")
			filled := float64(cardArea) / float64(root.w*root.h)
			t.Logf("%dx%d, cards cover %.2f", root.w, root.h, filled)
			assert.GreaterOrEqual(t, filled, minFilled, "cards cover %.2f of the %dx%d canvas", filled, root.w, root.h)
		})
	}
}

// checkBox checks b's texts and kids against b (path names it).
func checkBox(t *testing.T, b *box, path string) {
	t.Helper()
	for _, tx := range b.texts {
		x0, y0, x1, y1 := tx.extent()
		if x0 < 0 || y0 < 0 || x1 > float64(b.w) || y1 > float64(b.h) {
			t.Errorf("%s: text %q spans (%.1f,%.1f)-(%.1f,%.1f), outside its %dx%d box", path, tx.s, x0, y0, x1, y1, b.w, b.h)
		}
	}
	for i, k := range b.kids {
		name := path + "/" + k.class + kidName(k)
		if k.x < 0 || k.y < 0 || k.x+k.w > b.w || k.y+k.h > b.h {
			t.Errorf("%s: at (%d,%d) %dx%d, outside its %dx%d parent", name, k.x, k.y, k.w, k.h, b.w, b.h)
		}
		for _, o := range b.kids[:i] {
			if k.x < o.x+o.w && o.x < k.x+k.w && k.y < o.y+o.h && o.y < k.y+k.h {
				t.Errorf("%s overlaps %s%s", name, o.class, kidName(o))
			}
		}
		checkBox(t, k, name)
	}
}

func kidName(b *box) string {
	if b.title != "" {
		return "(" + b.title + ")"
	}
	if len(b.texts) > 0 {
		return "(" + strings.TrimSpace(b.texts[0].s) + ")"
	}
	return ""
}

func walk(b *box, f func(*box)) {
	f(b)
	for _, k := range b.kids {
		walk(k, f)
	}
}

// A line too long for a card wraps instead of widening it past the
// limit or leaving it.
func TestLongLinesWrap(t *testing.T) {
	long := "keeps CPUs " + strings.Repeat("100,", 40) + "101"
	b := cardBox(card{head: "host", lines: []string{long}}, cellH)
	checkBox(t, b, "card")
	assert.Greater(t, len(b.texts), 2)
	assert.LessOrEqual(t, b.w, 2*pad+int(float64(wrapAt)*fonts["text"].size*glyphEm)+1)
}
