package apply

import (
	"bufio"
	"bytes"
	"strings"
)

// unitValue returns the last value of key in [section] of a systemd unit
// file or drop-in ("" when absent): the last assignment wins, and an empty
// assignment resets the key, as systemd reads it. Continuation lines are
// joined.
func unitValue(content []byte, section, key string) (string, bool) {
	var (
		cur   string
		val   string
		found bool
		line  string
	)
	sc := bufio.NewScanner(bytes.NewReader(content))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasSuffix(l, "\\") {
			line += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		line += l
		t := strings.TrimSpace(line)
		line = ""
		switch {
		case t == "" || t[0] == '#' || t[0] == ';':
		case t[0] == '[' && strings.HasSuffix(t, "]"):
			cur = t[1 : len(t)-1]
		case cur == section:
			k, v, ok := strings.Cut(t, "=")
			if ok && strings.TrimSpace(k) == key {
				val, found = strings.TrimSpace(v), true
			}
		}
	}
	return val, found
}
