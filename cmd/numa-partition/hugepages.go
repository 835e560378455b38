package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/slices/hugepool"
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
				specs := make([]hugepool.Pool, 0, c.NArg())
				for _, a := range c.Args().Slice() {
					s, err := hugepool.ParsePool(a)
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

// applyHugepages fills the pools (hugepool.Fill) and prints each one
// filled as asked.
func applyHugepages(w io.Writer, sysfs string, pools []hugepool.Pool, write hugepool.Writer) error {
	return hugepool.Fill(sysfs, pools, write, func(p hugepool.Pool, before uint64) error {
		_, err := fmt.Fprintf(w, "node %d: %d pages of %s (were %d)\n", p.Node, p.Count, units.FormatBytes(p.PageSize), before)
		return err
	})
}
