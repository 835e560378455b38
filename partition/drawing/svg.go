package drawing

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
)

// SVG draws the picture as a standalone SVG document, sized to its
// content.
func SVG(w io.Writer, pic Picture) error {
	c, err := gather(pic)
	if err != nil {
		return err
	}
	root := layout(c)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" xml:space="preserve">
<style>
%s.card{stroke-width:3} .cpu{stroke:#555555;stroke-width:0.5} .id{text-anchor:middle}
</style>
`, root.w, root.h, root.w, root.h, fontFamily, fontStyles())
	emit(&b, root, 0, 0)
	b.WriteString("</svg>\n")
	_, err = w.Write(b.Bytes())
	return err
}

// fontStyles are the text classes' CSS, in name order.
func fontStyles() string {
	names := make([]string, 0, len(fonts))
	for n := range fonts {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		weight := "normal"
		if fonts[n].bold {
			weight = "bold"
		}
		fmt.Fprintf(&b, ".%s{font-size:%gpx;font-weight:%s} ", n, fonts[n].size, weight)
	}
	b.WriteString("\n")
	return b.String()
}

// emit writes b, its texts and its kids, b's parent being at (ox, oy).
func emit(w *bytes.Buffer, b *box, ox, oy int) {
	x, y := ox+b.x, oy+b.y
	if b.class != "" {
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d"`, x, y, b.w, b.h)
		if b.class == "card" || b.class == "numa" {
			w.WriteString(` rx="6"`)
		}
		if b.fill != "" {
			fmt.Fprintf(w, ` fill="%s"`, b.fill)
		}
		if b.stroke != "" {
			fmt.Fprintf(w, ` stroke="%s"`, b.stroke)
		}
		fmt.Fprintf(w, ` class="%s"`, b.class)
		if b.title != "" {
			fmt.Fprintf(w, `><title>%s</title></rect>`+"\n", esc(b.title))
		} else {
			w.WriteString("/>\n")
		}
	}
	for _, t := range b.texts {
		fmt.Fprintf(w, `<text x="%d" y="%d" class="%s">%s</text>`+"\n", x+t.x, y+t.y, t.class, esc(t.s))
	}
	for _, k := range b.kids {
		emit(w, k, x, y)
	}
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
