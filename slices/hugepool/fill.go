package hugepool

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
)

// Fill sets every pool, as the boot oneshot (`numa-partition hugepages
// apply`) does: it checks that every pool exists and that the pools not
// listed are empty before writing anything (kubelet's memory manager
// subtracts every hugepage it finds from the node's memory, and the
// rendered reservedMemory assumes the planned ones only), then writes the
// largest pages first and reports every problem at once. done is called
// for each pool the kernel filled as asked, with its count before.
//
// A pool not listed that holds pages on a node of owned (the partitions'
// nodes) is set to 0 like a listed one: pages that appeared after the
// plan was made (a kernel command line changed since) must not keep
// every kubelet from starting when nobody uses them (#37), and those in
// use stay and are reported. On other nodes (excluded ones: nobody's
// memory) such a pool is refused, as it is everywhere when owned is
// empty (a unit rendered before --nodes existed).
func Fill(sysfs string, pools []Pool, owned bitmask.NodeSet, write Writer, done func(p Pool, before uint64) error) error {
	listed := map[string]bool{}
	for _, p := range pools {
		path := Path(sysfs, p.Node, p.PageSize)
		if listed[path] {
			return fmt.Errorf("%s is given twice", p)
		}
		listed[path] = true
		if _, err := Read(path); err != nil {
			return fmt.Errorf("%s: node %d has no %s hugepage pool (no such node, or the CPU does not support that page size): %w", p, p.Node, units.FormatBytes(p.PageSize), err)
		}
	}
	if err := fitNodes(sysfs, pools); err != nil {
		return err
	}
	var problems []string
	all, err := filepath.Glob(filepath.Join(sysfs, "devices", "system", "node", "node*", "hugepages", "hugepages-*", "nr_hugepages"))
	if err != nil {
		return err
	}
	ordered := append([]Pool(nil), pools...)
	for _, path := range all {
		if listed[path] {
			continue
		}
		n, err := Read(path)
		if err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		if p, ok := poolOf(sysfs, path); ok && owned.Has(p.Node) {
			ordered = append(ordered, p) // Count 0: freed, or reported in use
			continue
		}
		problems = append(problems, fmt.Sprintf("%s holds %d pages the plan does not list: plan them (host.hugepages) or free them, or kubelet's memory manager counts that node wrong", poolName(sysfs, path), n))
	}
	SortForAllocation(ordered)
	for _, p := range ordered {
		path := Path(sysfs, p.Node, p.PageSize)
		before, _ := Read(path)
		got, err := Set(path, p.Count, write)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("node %d, %s pages: %v", p.Node, units.FormatBytes(p.PageSize), err))
		case got < p.Count:
			problems = append(problems, fmt.Sprintf("node %d: wanted %d pages of %s, the kernel allocated %d (memory fragmented or in use): reserve them at boot with the kernel command line `numa-partition render` prints", p.Node, p.Count, units.FormatBytes(p.PageSize), got))
		case got > p.Count && !listed[path]:
			problems = append(problems, fmt.Sprintf("node %d: %d pages of %s the plan does not list are in use and cannot be freed (the others were): stop what uses them, or plan them (host.hugepages, or host.unlisted_hugepages = \"adopt\") and apply", p.Node, got, units.FormatBytes(p.PageSize)))
		case got > p.Count:
			problems = append(problems, fmt.Sprintf("node %d: wanted %d pages of %s, %d remain (pages in use cannot be freed): stop what uses them", p.Node, p.Count, units.FormatBytes(p.PageSize), got))
		default:
			if err := done(p, before); err != nil {
				return err
			}
		}
	}
	if len(problems) > 0 {
		return errors.New("hugepages:\n  " + strings.Join(problems, "\n  "))
	}
	return nil
}

// fitNodes refuses pools whose pages together exceed their node's
// memory, before anything is written: the kernel takes every free page
// it can for nr_hugepages, so 0:2Mi=18446744073709551615 written
// unchecked would leave the host nothing (#38).
func fitNodes(sysfs string, pools []Pool) error {
	asked := map[int]uint64{}
	for _, p := range pools {
		b := p.Count * p.PageSize // ParsePool bounds each to 64 bits
		if sum := asked[p.Node]; b > ^uint64(0)-sum {
			asked[p.Node] = ^uint64(0) // saturated: more than any node has
		} else {
			asked[p.Node] = sum + b
		}
	}
	for _, node := range slices.Sorted(maps.Keys(asked)) {
		path := filepath.Join(sysfs, strings.TrimPrefix(hostpaths.NodeDir(node), "/sys"), "meminfo")
		data, err := fsutil.ReadFileBounded(path, maxMeminfo)
		if err != nil {
			return fmt.Errorf("node %d: reading its memory size to bound its hugepages: %w", node, err)
		}
		info, err := numa.ParseNodeMeminfo(node, string(data))
		if err != nil {
			return fmt.Errorf("node %d: %s: %w", node, path, err)
		}
		if total := info["MemTotal"]; asked[node] > total {
			return fmt.Errorf("node %d: the hugepages asked for (%s) exceed its memory (%s); nothing was written", node, units.FormatBytes(asked[node]), units.FormatBytes(total))
		}
	}
	return nil
}

// maxMeminfo bounds a node's meminfo (about 1.2 KB on 6.x kernels).
const maxMeminfo = 64 << 10

// poolOf is the pool, at count 0, whose nr_hugepages is at path (one of
// the paths Path makes below sysfs).
func poolOf(sysfs, path string) (Pool, bool) {
	var node int
	var kb uint64
	rel, err := filepath.Rel(filepath.Join(sysfs, "devices", "system", "node"), path)
	if err != nil {
		return Pool{}, false
	}
	if _, err := fmt.Sscanf(rel, "node%d/hugepages/hugepages-%dkB/nr_hugepages", &node, &kb); err != nil || kb == 0 || kb > ^uint64(0)>>10 {
		return Pool{}, false
	}
	return Pool{Node: node, PageSize: kb << 10}, Path(sysfs, node, kb<<10) == path
}

// poolName turns a pool path into "node 3, hugepages-2048kB".
func poolName(sysfs, path string) string {
	rel, err := filepath.Rel(filepath.Join(sysfs, "devices", "system", "node"), path)
	if err != nil {
		return path
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if len(parts) < 3 {
		return path
	}
	return strings.Replace(parts[0], "node", "node ", 1) + ", " + parts[2]
}

// SetPool sets one pool through write and returns what the kernel
// allocated (apply and remove, one pool at a time).
func SetPool(write Writer, sysfs string, p Pool) (uint64, error) {
	got, err := Set(Path(sysfs, p.Node, p.PageSize), p.Count, write)
	if err != nil {
		return 0, fmt.Errorf("allocating node%d %s=%d: %w", p.Node, units.HugepageResource(p.PageSize), p.Count, err)
	}
	return got, nil
}

// Shortfall is a pool the kernel could not fill.
type Shortfall struct {
	Node     int    `json:"node"`
	PageSize uint64 `json:"pageSize"`
	Wanted   uint64 `json:"wanted"`
	Got      uint64 `json:"got"`
}

func (s Shortfall) String() string {
	return fmt.Sprintf("node%d %s: wanted %d pages, the kernel allocated %d (%s short); "+
		"reserve them at boot (hugepagesz=/hugepages= on the kernel command line) or free memory and apply again",
		s.Node, units.HugepageResource(s.PageSize), s.Wanted, s.Got, units.FormatBytes((s.Wanted-s.Got)*s.PageSize))
}
