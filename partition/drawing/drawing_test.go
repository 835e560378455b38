package drawing

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite examples/*/plan.svg and plan.dot")

// The drawings of the examples are kept beside their plans; a change of
// either shows in review. cmd/numa-partition's TestExamplesFromDumpAndFacts
// checks that the CLI draws the same.
func TestExampleDrawings(t *testing.T) {
	for _, name := range examples(t) {
		t.Run(name, func(t *testing.T) {
			pic := examplePicture(t, name)
			for file, draw := range map[string]func(io.Writer, Picture) error{"plan.svg": SVG, "plan.dot": DOT} {
				var got bytes.Buffer
				require.NoError(t, draw(&got, pic))
				path := filepath.Join("..", "..", "examples", name, file)
				if *update {
					require.NoError(t, os.WriteFile(path, got.Bytes(), 0o644))
					continue
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "run go test ./partition/drawing -update")
				assert.Equal(t, string(want), got.String(), "%s is stale: run go test ./partition/drawing -update", path)
			}
		})
	}
}

// The same picture draws the same bytes.
func TestDrawingIsDeterministic(t *testing.T) {
	for _, p := range allPictures(t) {
		for _, draw := range []func(io.Writer, Picture) error{SVG, DOT} {
			var a, b bytes.Buffer
			require.NoError(t, draw(&a, p.pic))
			require.NoError(t, draw(&b, p.pic))
			assert.Equal(t, a.String(), b.String(), p.name)
		}
	}
}

func TestSize(t *testing.T) {
	for b, want := range map[uint64]string{512: "512B", 2 << 20: "2Mi", 1 << 30: "1Gi", 3 << 29: "1.5Gi", 1<<40 + 1<<39: "1.5Ti"} {
		assert.Equal(t, want, size(b))
	}
}

func TestWrap(t *testing.T) {
	assert.Equal(t, []string{"short"}, wrap("short", 60))
	assert.Equal(t, []string{"0-3,32-35,", "  64-67"}, wrap("0-3,32-35,64-67", 10))
	for _, l := range wrap("a-very-long-word-without-any-break-in-it", 8) {
		assert.LessOrEqual(t, len(l), 8, l)
	}
}

func TestIDs(t *testing.T) {
	assert.Equal(t, "0-3,8,10-11", ids([]int{0, 1, 2, 3, 8, 10, 11}))
	assert.Equal(t, "", ids(nil))
}
