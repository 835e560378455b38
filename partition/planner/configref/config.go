package configref

import (
	"fmt"
	"strings"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// configView is what a commented config shows beyond the reference: the
// keys it sets, examples and notes that fit one machine. The zero view is
// the generic config: every key commented out at its default or example.
type configView struct {
	header  []string            // comment lines at the top, written as they are
	live    map[string]string   // key → TOML value, written uncommented
	example map[string]string   // key → TOML value shown instead of the default or example
	notes   map[string][]string // key → comment paragraphs after the key's summary
}

// commentWidth is where comments wrap.
const commentWidth = 78

// GenericConfig is the commented default config that is not tied to a
// machine: the packaged /etc/numa-partition/config.toml
// (`numa-partition config init --generic`). Every key is commented out, so
// the file as shipped means the defaults.
func GenericConfig() []byte {
	return configView{header: []string{
		"numa-partition config (" + config.DefaultConfigPath + ").",
		"",
		"Every key is optional and shown commented out: at its default, or with an",
		"example where the default depends on the machine. Path and name templates",
		"may use {partition}, {index}, {hostname} and {root_dir}.",
		"",
		"  numa-partition config init        a commented config for this machine",
		"  numa-partition config reference   every key in full (markdown)",
		"  numa-partition config check       validate this file against the machine",
		"  numa-partition plan               the partitions it makes",
	}}.write()
}

func (v configView) write() []byte {
	var b strings.Builder
	comment := func(text string) {
		for _, l := range wrap(text, commentWidth-2) {
			b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	for _, l := range v.header {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n") // verbatim: may be aligned
	}
	for _, r := range Reference() {
		b.WriteString("\n")
		if r.IsSection() {
			comment(keyComment(r))
			for _, n := range v.notes[r.Key] {
				comment(n)
			}
			if strings.HasSuffix(r.Key, "[]") {
				b.WriteString("# ")
			}
			b.WriteString(tableHeader(r.Key) + "\n")
			continue
		}
		comment(keyComment(r))
		for _, n := range v.notes[r.Key] {
			comment(n)
		}
		if live, ok := v.live[r.Key]; ok {
			fmt.Fprintf(&b, "%s = %s\n", leafName(r.Key), live)
			continue
		}
		value := r.DefaultTOML()
		if ex, ok := v.example[r.Key]; ok {
			value = ex
		} else if value == "" {
			value = r.Example
		}
		fmt.Fprintf(&b, "# %s = %s\n", leafName(r.Key), value)
	}
	return []byte(b.String())
}

// keyComment is the text above a key or table in a commented config.
func keyComment(r KeyDoc) string {
	// The header explains templates once for all keys.
	text := strings.TrimSuffix(r.Doc, templateDoc)
	if r.IsSection() {
		return text
	}
	if len(r.Allowed) > 0 {
		text += " Allowed: " + strings.Join(r.Allowed, ", ") + "."
	}
	if r.Default == nil && r.DefaultText != "" {
		text += " Default: " + r.DefaultText + "."
	}
	return text
}

// wrap breaks text into lines of at most width runes at spaces (longer
// words stand alone). An empty text is one empty line; leading spaces are
// kept, for indented lines.
func wrap(text string, width int) []string {
	indent := text[:len(text)-len(strings.TrimLeft(text, " "))]
	words := strings.Fields(text)
	if len(words) == 0 {
		return []string{""}
	}
	var lines []string
	line := indent + words[0]
	for _, w := range words[1:] {
		if len([]rune(line))+1+len([]rune(w)) > width {
			lines = append(lines, line)
			line = indent + w
			continue
		}
		line += " " + w
	}
	return append(lines, line)
}
