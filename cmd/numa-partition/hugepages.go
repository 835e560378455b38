package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/numa/bitmask"
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
				"node's memory wrong. On the nodes --nodes names (the partitions', as rendered),\n" +
				"such a pool is freed instead, and only its pages in use are reported.\n" +
				"Bad arguments change nothing.",
			Flags: []cli.Flag{&cli.StringFlag{Name: "nodes", Usage: "the partitions' NUMA `NODES` (\"0-3\"): pools there that the arguments do not list are freed"}},
			Action: func(c *cli.Context) error {
				var owned bitmask.NodeSet
				if v := c.String("nodes"); v != "" {
					var err error
					if owned, err = bitmask.ParseNodeList(v); err != nil {
						return fmt.Errorf("--nodes: %w", err)
					}
				}
				specs := make([]hugepool.Pool, 0, c.NArg())
				for _, a := range c.Args().Slice() {
					s, err := hugepool.ParsePool(a)
					if err != nil {
						return err
					}
					specs = append(specs, s)
				}
				return applyHugepages(c.App.Writer, globalString(c, "sysfs"), specs, owned, hugepool.Write)
			},
		}},
	}
}

// applyHugepages fills the pools (hugepool.Fill) and prints each one
// filled as asked.
func applyHugepages(w io.Writer, sysfs string, pools []hugepool.Pool, owned bitmask.NodeSet, write hugepool.Writer) error {
	return hugepool.Fill(sysfs, pools, owned, write, func(p hugepool.Pool, before uint64) error {
		_, err := fmt.Fprintf(w, "node %d: %d pages of %s (were %d)\n", p.Node, p.Count, units.FormatBytes(p.PageSize), before)
		return err
	})
}
