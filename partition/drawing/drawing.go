// Package drawing draws a plan over its machine, the picture an operator
// pastes into a review: one card per partition (its Node's name, labels,
// taints and allocatable, and its NUMA nodes with memory, hugepages, NICs
// and GPUs and every CPU coloured by the partition that gets it; grey: the
// host's), a card for what the host keeps, the node distances, the tool's
// version and the config's digest. SVG needs no tool to view; DOT is for
// Graphviz users. Both are pure and deterministic: the same Picture draws
// the same bytes.
//
// Everything shown is read from the plan, the allocatable its caller
// derived from it (kubeletgen.Resources: what `plan` prints) or the
// topology's hardware facts; nothing the planner or kubeletgen decides is
// decided again, and drawing imports neither's downstream.
package drawing

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// Picture is what a drawing shows: a plan, the machine it was made for,
// and where it came from.
type Picture struct {
	Plan     *planner.Plan
	Topology *numa.Topology
	// Version is the version of the numa-partition that planned.
	Version string
	// ConfigDigest is ConfigDigest of the config's bytes, "" when the
	// plan was made without a config file (all defaults).
	ConfigDigest string
	// Allocatable is each partition's Node allocatable by partition name
	// (resource → quantity), as plan prints it: kubeletgen.Resources of
	// the plan, which the caller derives.
	Allocatable map[string]map[string]string
}

// ConfigDigest names a config by its bytes, short enough for a caption.
func ConfigDigest(config []byte) string {
	sum := sha256.Sum256(config)
	return "sha256:" + hex.EncodeToString(sum[:])[:16]
}

// Colours besides a partition's.
const (
	hostColor     = "#b0b0b0"
	excludedColor = "#e8e8e8"
)

// palette gives the plan's colour names (config.Colors) a fill; names
// beyond it ("color17") cycle through it.
var palette = map[string]string{
	"red": "#e05252", "blue": "#4f7fd9", "green": "#4caf50", "yellow": "#e6c229",
	"orange": "#f08c2e", "purple": "#9060c0", "cyan": "#33b5c5", "magenta": "#d050b0",
	"brown": "#9a6b45", "pink": "#f28fb0", "olive": "#9a9a30", "teal": "#2b8c8c",
	"navy": "#34508f", "maroon": "#8f3040", "lime": "#9ccc3c", "gray": "#707070",
}

// fill is the colour of partition p.
func fill(p planner.Partition) string {
	if c, ok := palette[p.Color]; ok {
		return c
	}
	return palette[config.Colors[p.Index%len(config.Colors)]]
}

// size prints bytes for people: the largest binary unit, one decimal
// where it is not exact.
func size(b uint64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}} {
		if b >= 1<<u.shift {
			if b%(1<<u.shift) == 0 {
				return fmt.Sprintf("%d%s", b>>u.shift, u.suffix)
			}
			return fmt.Sprintf("%.1f%s", float64(b)/float64(uint64(1)<<u.shift), u.suffix)
		}
	}
	return fmt.Sprintf("%dB", b)
}

// ids prints ascending ints as the kernel's list form ("0-3,8").
func ids(xs []int) string {
	out := ""
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if out != "" {
			out += ","
		}
		if j > i {
			out += fmt.Sprintf("%d-%d", xs[i], xs[j])
		} else {
			out += fmt.Sprint(xs[i])
		}
		i = j + 1
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
