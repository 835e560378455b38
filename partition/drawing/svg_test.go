package drawing

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// svgDoc is what the checks read back from an SVG document.
type svgDoc struct {
	w, h  int
	sizes map[string]float64 // font-size of each text class, from <style>
	rects []svgRect
	texts []svgText
}

type svgRect struct {
	x, y, w, h  float64
	class, fill string
	title       string
}

type svgText struct {
	x, y  float64
	class string
	s     string
}

var fontSizeRe = regexp.MustCompile(`\.([a-z]+)\{font-size:([0-9.]+)px`)

// parseSVG reads doc with encoding/xml: its size, rects, texts and the
// font size of each text class.
func parseSVG(t *testing.T, doc []byte) svgDoc {
	t.Helper()
	d := svgDoc{sizes: map[string]float64{}}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var in string // the element whose character data is read
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	num := func(e xml.StartElement, name string) float64 {
		v, err := strconv.ParseFloat(attr(e, name), 64)
		require.NoError(t, err, "%s of %s", name, e.Name.Local)
		return v
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "not well-formed")
		switch e := tok.(type) {
		case xml.StartElement:
			in = e.Name.Local
			switch in {
			case "svg":
				d.w, d.h = int(num(e, "width")), int(num(e, "height"))
				assert.Equal(t, fmt.Sprintf("0 0 %d %d", d.w, d.h), attr(e, "viewBox"))
			case "rect":
				if attr(e, "class") != "" {
					d.rects = append(d.rects, svgRect{x: num(e, "x"), y: num(e, "y"), w: num(e, "width"), h: num(e, "height"), class: attr(e, "class"), fill: attr(e, "fill")})
				}
			case "text":
				d.texts = append(d.texts, svgText{x: num(e, "x"), y: num(e, "y"), class: attr(e, "class")})
			}
		case xml.CharData:
			switch in {
			case "style":
				for _, m := range fontSizeRe.FindAllStringSubmatch(string(e), -1) {
					d.sizes[m[1]], _ = strconv.ParseFloat(m[2], 64)
				}
			case "text":
				d.texts[len(d.texts)-1].s += string(e)
			case "title":
				d.rects[len(d.rects)-1].title += string(e)
			}
		case xml.EndElement:
			in = ""
		}
	}
	return d
}

// extent is where a text's glyphs may be, by the emitted font size; text
// of class id is centred (text-anchor:middle in <style>).
func (d svgDoc) extent(t svgText) (x0, y0, x1, y1 float64) {
	size := d.sizes[t.class]
	w := float64(utf8.RuneCountInString(t.s)) * size * glyphEm
	x0 = t.x
	if t.class == "id" {
		x0 -= w / 2
	}
	return x0, t.y - size*ascentEm, x0 + w, t.y + size*descentEm
}

// In every picture's SVG as emitted: every text lies inside the smallest
// rect that holds its anchor, every rect inside the canvas, and every
// online CPU is one rect, in its owner's colour.
func TestSVGKeepsTextInItsRect(t *testing.T) {
	for _, p := range allPictures(t) {
		t.Run(p.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, SVG(&out, p.pic))
			d := parseSVG(t, out.Bytes())
			require.NotEmpty(t, d.sizes)
			for _, r := range d.rects {
				assert.True(t, r.x >= 0 && r.y >= 0 && r.x+r.w <= float64(d.w) && r.y+r.h <= float64(d.h), "%s rect %v outside the %dx%d canvas", r.class, r, d.w, d.h)
			}
			for _, tx := range d.texts {
				require.Contains(t, d.sizes, tx.class, "text class %q has no font-size", tx.class)
				var in *svgRect
				for i, r := range d.rects {
					if tx.x >= r.x && tx.x <= r.x+r.w && tx.y >= r.y && tx.y <= r.y+r.h && (in == nil || r.w*r.h < in.w*in.h) {
						in = &d.rects[i]
					}
				}
				if !assert.NotNil(t, in, "text %q at (%g,%g) is in no rect", tx.s, tx.x, tx.y) {
					continue
				}
				x0, y0, x1, y1 := d.extent(tx)
				assert.True(t, x0 >= in.x && y0 >= in.y && x1 <= in.x+in.w && y1 <= in.y+in.h,
					"text %q spans (%.1f,%.1f)-(%.1f,%.1f), leaving its %s rect (%g,%g) %gx%g", tx.s, x0, y0, x1, y1, in.class, in.x, in.y, in.w, in.h)
			}

			owner := map[int]string{}
			for _, cpu := range p.pic.Topology.Online.IDs() {
				owner[cpu] = hostColor
			}
			for _, part := range p.pic.Plan.Partitions {
				for _, cpu := range part.CPUs.IDs() {
					owner[cpu] = fill(part)
				}
			}
			drawn := map[int]int{}
			for _, r := range d.rects {
				if r.class != "cpu" {
					continue
				}
				var id int
				_, err := fmt.Sscanf(r.title, "CPU %d:", &id)
				require.NoError(t, err, r.title)
				drawn[id]++
				assert.Equal(t, owner[id], r.fill, "CPU %d's colour", id)
			}
			for _, cpu := range p.pic.Topology.Online.IDs() {
				assert.Equal(t, 1, drawn[cpu], "CPU %d drawn once", cpu)
			}
			assert.Len(t, drawn, p.pic.Topology.Online.Len(), "only online CPUs are drawn")
		})
	}
}
