package numa

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/units"
)

// NodeMeminfo is a node's meminfo: values in bytes for "kB" lines, plain
// counts for the others (HugePages_Total).
type NodeMeminfo map[string]uint64

// ParseNodeMeminfo parses /sys/devices/system/node/nodeN/meminfo strictly:
// every line is "Node <id> <Key>: <value>[ kB]" for this node's id, keys are
// unique, MemTotal and MemFree are present. Old kernels start the file with
// an empty line and some end it with a NUL; both are trimmed. No other
// content is accepted, so a truncated or foreign file is an error, not a
// zero.
func ParseNodeMeminfo(nodeID int, s string) (NodeMeminfo, error) {
	s = strings.Trim(s, " \t\r\n\x00")
	if s == "" {
		return nil, fmt.Errorf("empty")
	}
	info := NodeMeminfo{}
	prefix := strconv.Itoa(nodeID)
	for i, line := range strings.Split(s, "\n") {
		key, value, err := parseMeminfoLine(prefix, line)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %w", i+1, line, err)
		}
		if _, dup := info[key]; dup {
			return nil, fmt.Errorf("line %d %q: key %s appears twice", i+1, line, key)
		}
		info[key] = value
	}
	for _, key := range []string{"MemTotal", "MemFree"} {
		if _, ok := info[key]; !ok {
			return nil, fmt.Errorf("no %s line", key)
		}
	}
	return info, nil
}

func parseMeminfoLine(nodeID, line string) (string, uint64, error) {
	f := strings.Fields(line)
	if len(f) != 4 && len(f) != 5 {
		return "", 0, fmt.Errorf(`want "Node %s <Key>: <value>[ kB]"`, nodeID)
	}
	if f[0] != "Node" || f[1] != nodeID {
		return "", 0, fmt.Errorf(`want the line to start with "Node %s"`, nodeID)
	}
	key, ok := strings.CutSuffix(f[2], ":")
	if !ok || key == "" || strings.Contains(key, ":") {
		return "", 0, fmt.Errorf("key %q must be a name followed by a colon", f[2])
	}
	if len(f) == 5 {
		if f[4] != "kB" {
			return "", 0, fmt.Errorf("unit %q: only kB is allowed", f[4])
		}
		b, err := units.ParseKernelKB(f[3] + "kB")
		if err != nil {
			return "", 0, err
		}
		return key, b, nil
	}
	if f[3][0] < '0' || f[3][0] > '9' {
		return "", 0, fmt.Errorf("value %q is not a non-negative decimal integer", f[3])
	}
	n, err := strconv.ParseUint(f[3], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("value %q is not a non-negative decimal integer", f[3])
	}
	return key, n, nil
}
