package drawing

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every picture renders to a PNG with rsvg-convert (librsvg, what most
// viewers and converters use) at the size the SVG declares, within
// bounds. rsvg-convert is required: apt-get install librsvg2-bin.
func TestSVGRendersToPNG(t *testing.T) {
	rsvg, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Fatalf("rsvg-convert is not installed (Debian/Ubuntu: apt-get install -y librsvg2-bin): this test renders every picture to PNG: %v", err)
	}
	dir := t.TempDir()
	for _, p := range allPictures(t) {
		t.Run(p.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, SVG(&out, p.pic))
			d := parseSVG(t, out.Bytes())
			base := filepath.Join(dir, strings.ReplaceAll(p.name, "/", "_"))
			require.NoError(t, os.WriteFile(base+".svg", out.Bytes(), 0o644))
			msg, err := exec.Command(rsvg, "-o", base+".png", base+".svg").CombinedOutput()
			require.NoError(t, err, "rsvg-convert: %s", msg)
			f, err := os.Open(base + ".png")
			require.NoError(t, err)
			defer f.Close()
			cfg, err := png.DecodeConfig(f)
			require.NoError(t, err)
			assert.Equal(t, d.w, cfg.Width)
			assert.Equal(t, d.h, cfg.Height)
			assert.Less(t, cfg.Width, maxWidth)
			assert.Less(t, cfg.Height, maxHeight)
		})
	}
}
