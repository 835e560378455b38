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
	"github.com/numa-partition/numa-partition/numa/units"
)

// Fill sets every pool, as the boot oneshot (`numa-partition hugepages
// apply`) does: it checks that every pool exists and that the pools not
// listed are empty before writing anything (kubelet's memory manager
// subtracts every hugepage it finds from the node's memory, and the
// rendered reservedMemory assumes the planned ones only), then writes the
// largest pages first and reports every problem at once. done is called
// for each pool the kernel filled as asked, with its count before.
func Fill(sysfs string, pools []Pool, write Writer, done func(p Pool, before uint64) error) error {
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
	for _, path := range all {
		if listed[path] {
			continue
		}
		n, err := Read(path)
		if err != nil {
			return err
		}
		if n != 0 {
			problems = append(problems, fmt.Sprintf("%s holds %d pages the plan does not list: plan them (host.hugepages) or free them, or kubelet's memory manager counts that node wrong", poolName(sysfs, path), n))
		}
	}
	ordered := append([]Pool(nil), pools...)
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
