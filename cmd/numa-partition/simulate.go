package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/scenario"
	"github.com/numa-partition/numa-partition/partition/fromplan"
)

// simulateCommand plays a capacity-planning scenario through the allocator.
func simulateCommand() *cli.Command {
	return &cli.Command{
		Name:      "simulate",
		Usage:     "play pod/VMI add and delete events through the partition allocator and print each decision and the final MemoryTables",
		ArgsUsage: "SCENARIO (YAML or JSON file, - for stdin)",
		Description: "The scenario gives a machine (a sysfs dump or inline nodes), kubelet's reservedMemory, the\n" +
			"Topology Manager policy, scope and options, and events (Pod or VirtualMachineInstance manifests,\n" +
			"deletes). Decisions follow kubelet 1.37's Memory Manager static policy; see docs/allocator.md.\n" +
			"Exit status 0, or 1 with --fail-on-reject when some pod was rejected; 2 for an invalid scenario.",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "fail-on-reject", Usage: "exit with status 1 when any admission is rejected"},
			&cli.StringFlag{Name: "partition", Usage: "play the events against this `NAME`d partition of the plan (its nodes, reservations and policy, as its allocator decides); the scenario then gives events only"},
			&cli.StringFlag{Name: "plan", Usage: "with --partition: the plan `FILE` (plan -o json|yaml, or the rendered /etc/numa-partition/plan.json); without it --config is planned on the machine under --sysfs"},
		}, planFlags()...),
		Action: func(c *cli.Context) error {
			format, err := outputFormat(c)
			if err != nil {
				return err
			}
			if c.NArg() != 1 {
				return fmt.Errorf("simulate: want one scenario file, got %d arguments", c.NArg())
			}
			sc, dir, err := scenario.Load(c.Args().First())
			if err != nil {
				return err
			}
			var rep *scenario.Report
			if name := c.String("partition"); name != "" {
				rep, err = simulatePartition(c, name, sc)
			} else if c.IsSet("plan") {
				return fmt.Errorf("simulate: --plan needs --partition: the partition of the plan to play the events against")
			} else {
				rep, err = scenario.Run(sc, dir)
			}
			if err != nil {
				return fmt.Errorf("scenario %s: %w", c.Args().First(), err)
			}
			if structured(format) {
				err = writeData(c.App.Writer, format, kindSimulation, rep)
			} else {
				err = printReport(c.App.Writer, rep)
			}
			if err != nil {
				return err
			}
			if n := rep.Rejected(); n > 0 && c.Bool("fail-on-reject") {
				return exitError{code: 1, msg: fmt.Sprintf("%d admission(s) rejected", n)}
			}
			return nil
		},
	}
}

// simulatePartition plays sc's events against partition name of the plan
// (--plan, else --config planned on --sysfs), configured as that
// partition's allocator daemon is (fromplan.AllocatorConfig).
func simulatePartition(c *cli.Context, name string, sc *scenario.Scenario) (*scenario.Report, error) {
	if err := sc.OnlyEvents(); err != nil {
		return nil, err
	}
	plan, topo, err := servePlan(c)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range plan.Partitions {
		if p.Name == name {
			cfg, err := fromplan.AllocatorConfig(p, topo)
			if err != nil {
				return nil, err
			}
			return scenario.RunWith(cfg, sc)
		}
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("--partition %q is not in the plan; planned partitions: %s", name, strings.Join(names, ", "))
}

func printReport(w io.Writer, rep *scenario.Report) error {
	cfg := rep.Config
	fmt.Fprintf(w, "policy %s, scope %s, %d NUMA nodes\n\n", cfg.Policy, cfg.Scope, len(cfg.Nodes))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EVENT\tACTION\tPOD\tRESULT\tCONTAINERS@NUMA[MEMORY] / REASON")
	for _, o := range rep.Outcomes {
		if o.Decision == nil {
			res := "not found"
			if o.Released != nil && *o.Released {
				res = "released"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\n", o.Event, o.Action, shown(o.Deleted), res)
			continue
		}
		d := o.Decision
		res := "admitted"
		switch {
		case !d.Admitted:
			res = "rejected"
		case !d.Pinned:
			res = "admitted (not pinned)"
		}
		var cs []string
		for _, c := range d.Containers {
			cs = append(cs, fmt.Sprintf("%s@%s[%s]", shown(c.Name), c.NUMANodes, memString(c.Memory)))
		}
		if d.Reason != "" {
			cs = append(cs, shown(d.Reason))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", o.Event, o.Action, shown(d.Pod), res, strings.Join(cs, " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nFinal MemoryTables:")
	return writeJSON(w, rep.Machine)
}

func memString(m map[allocator.ResourceName]uint64) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := slices.Collect(func(yield func(string) bool) {
		for _, n := range names {
			if !yield(n + "=" + units.FormatBytes(m[allocator.ResourceName(n)])) {
				return
			}
		}
	})
	return strings.Join(parts, ",")
}
