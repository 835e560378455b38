package config

import (
	"regexp"
	"strconv"
	"strings"
)

// source locates keys in the TOML text a Config was parsed from, so that
// validation errors found long after decoding can still name a line.
// BurntSushi/toml keeps key positions private, so this is a small scanner
// over the already-valid document: it follows table headers and key
// assignments and skips the inside of multi-line values. It only locates;
// decoding is toml's job.
type source struct {
	name  string
	lines map[string]int // "kubelet.port", "partition[1].name" → line
}

var (
	headerRe = regexp.MustCompile(`^\[\[?\s*([^\]]+?)\s*\]\]?`)
	keyRe    = regexp.MustCompile(`^((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=`)
)

func newSource(name string, data string) *source {
	s := &source{name: name, lines: map[string]int{}}
	var table string
	arrays := map[string]int{} // array-of-tables name → count so far
	depth := 0                 // open [ and { of multi-line values
	inMulti := ""              // the delimiter of an open multi-line string
	for i, raw := range strings.Split(data, "\n") {
		line := strings.TrimSpace(raw)
		if inMulti == "" && depth == 0 {
			if m := headerRe.FindStringSubmatch(line); m != nil {
				name := inLastElement(joinKey(m[1]), arrays)
				if strings.HasPrefix(line, "[[") {
					n := arrays[name]
					arrays[name] = n + 1
					table = name + "[" + strconv.Itoa(n) + "]"
				} else {
					table = name
				}
				s.record(table, i+1)
				continue
			}
			if m := keyRe.FindStringSubmatch(line); m != nil {
				key := joinKey(m[1])
				if table != "" {
					key = table + "." + key
				}
				s.record(key, i+1)
			}
		}
		depth, inMulti = scanValue(line, depth, inMulti)
	}
	return s
}

// inLastElement names a table header's table inside the last element of
// the array of tables it lies in: after [[partition]], [partition.drop_in]
// is partition[0].drop_in, as TOML reads it.
func inLastElement(name string, arrays map[string]int) string {
	for cut := strings.LastIndexByte(name, '.'); cut > 0; cut = strings.LastIndexByte(name[:cut], '.') {
		if n := arrays[name[:cut]]; n > 0 {
			return name[:cut] + "[" + strconv.Itoa(n-1) + "]" + name[cut:]
		}
	}
	return name
}

// record keeps the first line of a key and of every key with its array
// indexes removed ("partition.name"), which is how toml reports
// undecoded keys.
func (s *source) record(key string, line int) {
	if _, ok := s.lines[key]; !ok {
		s.lines[key] = line
	}
	plain := stripIndexes(key)
	if _, ok := s.lines[plain]; !ok {
		s.lines[plain] = line
	}
}

// line returns the line of key, or of its nearest enclosing key that was
// written in the file (a map entry set in an inline table is found at the
// line of the table), or 0.
func (s *source) line(key string) int {
	for key != "" {
		if l, ok := s.lines[key]; ok {
			return l
		}
		cut := strings.LastIndexAny(key, ".[")
		if cut < 0 {
			return 0
		}
		key = key[:cut]
	}
	return 0
}

var indexRe = regexp.MustCompile(`\[\d+\]`)

func stripIndexes(key string) string { return indexRe.ReplaceAllString(key, "") }

// joinKey normalises a dotted TOML key: whitespace around dots and quotes
// around parts are dropped.
func joinKey(k string) string {
	var parts []string
	for _, p := range splitDotted(k) {
		p = strings.TrimSpace(p)
		if len(p) >= 2 && (p[0] == '"' || p[0] == '\'') && p[len(p)-1] == p[0] {
			p = p[1 : len(p)-1]
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ".")
}

func splitDotted(k string) []string {
	var parts []string
	var quote byte
	start := 0
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			parts = append(parts, k[start:i])
			start = i + 1
		}
	}
	return append(parts, k[start:])
}

// scanValue follows brackets and multi-line strings across one line,
// ignoring what is inside strings and comments.
func scanValue(line string, depth int, inMulti string) (int, string) {
	for i := 0; i < len(line); i++ {
		if inMulti != "" {
			if strings.HasPrefix(line[i:], inMulti) {
				i += len(inMulti) - 1
				inMulti = ""
			}
			continue
		}
		switch c := line[i]; c {
		case '#':
			return depth, inMulti
		case '[', '{':
			depth++
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '"', '\'':
			delim := string(c)
			if strings.HasPrefix(line[i:], strings.Repeat(delim, 3)) {
				inMulti = strings.Repeat(delim, 3)
				i += 2
				continue
			}
			// A single-line string: skip to its closing quote.
			for i++; i < len(line) && line[i] != c; i++ {
				if c == '"' && line[i] == '\\' {
					i++
				}
			}
		}
	}
	return depth, inMulti
}
