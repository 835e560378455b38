package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/numa-partition/numa-partition/pipeline"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/hostfacts"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/drawing"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

func planCommand() *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "show the partitions the config makes of this machine",
		Description: "Discovers the machine (--sysfs), reads --config and prints the plan: what the\n" +
			"host keeps, and per partition its NUMA nodes, CPUs, memory, hugepages, ports,\n" +
			"node name, labels, paths and policies, then each Node's capacity and\n" +
			"allocatable as kubelet will publish them, next to the partition's share.\n" +
			"Nothing on the host changes.\n" +
			"With --output json it prints the Plan schema documented in docs/plan.md;\n" +
			"--output svg draws the machine, every CPU coloured by its partition (dot: the\n" +
			"same for Graphviz).\n" +
			"Every problem in the config is reported at once, with file, line and key.",
		Flags: planFlags(),
		Action: func(c *cli.Context) error {
			if f := globalString(c, "output"); f == "svg" || f == "dot" {
				return drawPlan(c, f)
			}
			format, err := outputFormat(c)
			if err != nil {
				return err
			}
			plan, _, err := loadPlan(c)
			if err != nil {
				return err
			}
			doc, err := planDocument(plan)
			if err != nil {
				return err
			}
			if structured(format) {
				return writeData(c.App.Writer, format, kindPlan, doc)
			}
			if err := planner.WriteTable(c.App.Writer, doc.Plan, tableWidth(format)); err != nil {
				return err
			}
			return writeNodeResources(c.App.Writer, doc.NodeResources)
		},
	}
}

// planDocument is what plan prints of plan: the Plan's keys, plus what
// each Node will publish, and among the warnings each Node that will not
// offer exactly its partition's share (printed once, in the output: the
// table's warnings, the JSON's "warnings", not also logged). plan is not
// changed: apply --plan renders a plan's document to compare with the
// file reviewed, and applies the plan.
func planDocument(plan *planner.Plan) (planOutput, error) {
	nodes, err := nodeResources(plan)
	if err != nil {
		return planOutput{}, err
	}
	p := *plan
	p.Warnings = slices.Clip(plan.Warnings)
	for _, n := range nodes {
		for _, m := range n.Mismatches {
			p.Warnings = append(p.Warnings, fmt.Sprintf("Node %s will not offer exactly partition %s's share: %s", n.NodeName, n.Partition, m))
		}
	}
	return planOutput{&p, nodes}, nil
}

// drawPlan is plan -o svg / -o dot: the machine with every CPU coloured
// by its partition, for a review.
func drawPlan(c *cli.Context, format string) error {
	plan, topo, err := loadPlan(c)
	if err != nil {
		return err
	}
	nodes, err := nodeResources(plan)
	if err != nil {
		return err
	}
	pic := drawing.Picture{Plan: plan, Topology: topo, Version: currentBuild().Version, Allocatable: map[string]map[string]string{}}
	for _, n := range nodes {
		pic.Allocatable[n.Partition] = n.Allocatable
	}
	// The config's digest in the caption ("" for the defaults, no file):
	// loadPlan has read the same file within the same bound.
	if data, err := fsutil.ReadFileBounded(globalString(c, "config"), 1<<20); err == nil {
		pic.ConfigDigest = drawing.ConfigDigest(data)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading config: %w", err)
	}
	if format == "dot" {
		return drawing.DOT(c.App.Writer, pic)
	}
	return drawing.SVG(c.App.Writer, pic)
}

// hostnameFlag is --hostname of the commands that plan.
func hostnameFlag() cli.Flag {
	return &cli.StringFlag{Name: "hostname", Usage: "plan for this host name instead of the config's kubelet.hostname or this machine's"}
}

// hostFactsFlag is --host-facts of the commands that plan.
func hostFactsFlag() cli.Flag {
	return &cli.StringFlag{Name: "host-facts", Usage: "plan with the host facts of `FILE` (JSON or TOML, as discover --host-facts-out writes them on the target: its host name, pid limit, filesystems and interfaces) instead of this machine's"}
}

// planFlags are the flags of every command that plans.
func planFlags() []cli.Flag { return []cli.Flag{hostnameFlag(), hostFactsFlag(), cgroupModeFlagDef()} }

// liveFacts are this machine's facts for c: the cgroup mode is
// --cgroup-mode's when the command has it and it is given, else read
// below the command's --root ("/" without one).
func liveFacts(c *cli.Context) (hostfacts.Host, error) {
	h := hostfacts.Live
	h.Root = c.String("root")
	mode, err := cgroupModeFlag(c)
	h.Cgroup = mode
	return h, err
}

// loadPlan is discover → config → plan, shared by every command that needs
// a plan, with the facts of --host-facts or of this machine (a warning
// then when --sysfs is a dump: warnDumpFacts).
func loadPlan(c *cli.Context) (*planner.Plan, *numa.Topology, error) {
	return loadPlanAs(c, nil)
}

// loadPlanAs is loadPlan with the machine's moving figures of figures
// when not nil (pipeline.Options.Figures).
func loadPlanAs(c *cli.Context, figures *planner.Figures) (*planner.Plan, *numa.Topology, error) {
	if file := c.String("host-facts"); file != "" {
		o := pipelineOptions(c, nil, nil)
		o.FactsFile, o.Figures = file, figures
		return pipeline.Plan(c.Context, o)
	}
	host, err := liveFacts(c)
	if err != nil {
		return nil, nil, err
	}
	var named string // this machine's host name, when the plan took it
	o := pipelineOptions(c, host, func() (string, error) {
		name, err := os.Hostname()
		named = name
		return name, err
	})
	o.Figures = figures
	plan, topo, err := pipeline.Plan(c.Context, o)
	if figures == nil {
		warnDumpFacts(c, named)
	}
	return plan, topo, err
}

// loadPlanWith plans with facts (pipeline.Plan). The hostname comes from
// --hostname (when the command has it), then kubelet.hostname, then
// hostname(), so that planning stays pure.
func loadPlanWith(c *cli.Context, facts planner.HostFacts, hostname func() (string, error)) (*planner.Plan, *numa.Topology, error) {
	return pipeline.Plan(c.Context, pipelineOptions(c, facts, hostname))
}

// pipelineOptions are the pipeline's options from c's flags: --sysfs,
// --config (a missing file is all defaults unless it was given),
// --hostname.
func pipelineOptions(c *cli.Context, facts planner.HostFacts, hostname func() (string, error)) pipeline.Options {
	return pipeline.Options{Sysfs: globalString(c, "sysfs"), Config: globalString(c, "config"), ConfigRequired: globalIsSet(c, "config"),
		Hostname: c.String("hostname"), Facts: facts, FactsHostname: hostname}
}

// loadConfig reads --config as the pipeline does.
func loadConfig(c *cli.Context) (*config.Config, error) {
	return pipelineOptions(c, nil, nil).LoadConfig()
}
