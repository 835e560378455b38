package configref

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docs/config.md is prose with tables that repeat each key's default; the
// generated reference is the source. This test keeps the prose honest:
// every key its tables name exists, and every default they spell out as a
// literal is the one the code uses.
func TestConfigDocMatchesReference(t *testing.T) {
	data, err := os.ReadFile("../../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	ref := map[string]KeyDoc{}
	for _, d := range Reference() {
		ref[d.Key] = d
	}
	section := regexp.MustCompile("^## `\\[\\[?([a-z_]+)\\]\\]?`")
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| `([^`]*)`")
	prefix, checked := "", 0
	for i, line := range strings.Split(string(data), "\n") {
		if m := section.FindStringSubmatch(line); m != nil {
			prefix = m[1] + "."
			if strings.HasPrefix(line, "## `[[") {
				prefix = m[1] + "[]."
			}
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil || prefix == "" {
			continue
		}
		key := prefix + m[1]
		d, ok := ref[key]
		if !ok {
			t.Errorf("docs/config.md:%d: key %q is not in the reference (renamed or removed?)", i+1, key)
			continue
		}
		want := strings.Trim(d.DefaultTOML(), `"`)
		got := strings.Trim(m[2], `"`)
		if d.DefaultTOML() == "" || strings.HasPrefix(got, "{") {
			continue // machine-dependent default, or a table spelled out in prose
		}
		checked++
		if got != want {
			t.Errorf("docs/config.md:%d: %s default is %q in the docs, %q in the code", i+1, key, got, want)
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d defaults: the table format of docs/config.md changed, update this test", checked)
	}
}
