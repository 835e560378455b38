package main

import (
	"errors"
	"fmt"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/slices/render"
)

func hugepagesCommand() *cli.Command {
	return &cli.Command{
		Name:  "hugepages",
		Usage: "set each NUMA node's hugepage pools (run by numa-partition-hugepages.service)",
		Subcommands: []*cli.Command{{
			Name:      "apply",
			Usage:     "set per-node hugepage pools and fail if the kernel comes up short",
			ArgsUsage: "NODE:SIZE=COUNT...",
			Description: "Sets /sys/devices/system/node/nodeN/hugepages/hugepages-<size>kB/nr_hugepages\n" +
				"for each NODE:SIZE=COUNT (e.g. 0:1Gi=4 1:2Mi=512), largest pages first, and\n" +
				"reads every pool back. It fails, naming each node and size, when the kernel\n" +
				"allocated fewer pages (memory fragmented or in use: reserve them on the kernel\n" +
				"command line that `render` prints) or kept more (pages in use), and when a\n" +
				"pool that is not listed holds pages: kubelet's memory manager would count that\n" +
				"node's memory wrong. Bad arguments change nothing.",
			Action: func(c *cli.Context) error {
				specs := make([]render.HugepageSpec, 0, c.NArg())
				for _, a := range c.Args().Slice() {
					s, err := render.ParseHugepageSpec(a)
					if err != nil {
						return err
					}
					specs = append(specs, s)
				}
				return applyHugepages(c.App.Writer, globalString(c, "sysfs"), specs, hugepool.Write)
			},
		}},
	}
}

// applyHugepages checks every argument and pool before writing anything,
// then writes largest pages first and reports every shortfall at once.
func applyHugepages(w io.Writer, sysfs string, specs []render.HugepageSpec, write hugepool.Writer) error {
	listed := map[string]bool{}
	for _, s := range specs {
		path := hugepool.Path(sysfs, s.Node, s.PageSize)
		if listed[path] {
			return fmt.Errorf("%s is given twice", s)
		}
		listed[path] = true
		if _, err := hugepool.Read(path); err != nil {
			return fmt.Errorf("%s: node %d has no %s hugepage pool (no such node, or the CPU does not support that page size): %w", s, s.Node, units.FormatBytes(s.PageSize), err)
		}
	}
	var problems []string
	// Unlisted pools must be empty: kubelet's memory manager subtracts
	// every hugepage it finds from the node's memory, and the rendered
	// reservedMemory assumes the planned ones only.
	pools, err := filepath.Glob(filepath.Join(sysfs, "devices", "system", "node", "node*", "hugepages", "hugepages-*", "nr_hugepages"))
	if err != nil {
		return err
	}
	for _, path := range pools {
		if listed[path] {
			continue
		}
		n, err := hugepool.Read(path)
		if err != nil {
			return err
		}
		if n != 0 {
			problems = append(problems, fmt.Sprintf("%s holds %d pages the plan does not list: plan them (host.hugepages) or free them, or kubelet's memory manager counts that node wrong", poolName(sysfs, path), n))
		}
	}
	render.SortForAllocation(specs)
	for _, s := range specs {
		path := hugepool.Path(sysfs, s.Node, s.PageSize)
		before, _ := hugepool.Read(path)
		got, err := hugepool.Set(path, s.Count, write)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("node %d, %s pages: %v", s.Node, units.FormatBytes(s.PageSize), err))
		case got < s.Count:
			problems = append(problems, fmt.Sprintf("node %d: wanted %d pages of %s, the kernel allocated %d (memory fragmented or in use): reserve them at boot with the kernel command line `numa-partition render` prints", s.Node, s.Count, units.FormatBytes(s.PageSize), got))
		case got > s.Count:
			problems = append(problems, fmt.Sprintf("node %d: wanted %d pages of %s, %d remain (pages in use cannot be freed): stop what uses them", s.Node, s.Count, units.FormatBytes(s.PageSize), got))
		default:
			if _, err := fmt.Fprintf(w, "node %d: %d pages of %s (were %d)\n", s.Node, got, units.FormatBytes(s.PageSize), before); err != nil {
				return err
			}
		}
	}
	if len(problems) > 0 {
		return errors.New("hugepages:\n  " + strings.Join(problems, "\n  "))
	}
	return nil
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
