package main

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/render"
)

// renderFlags are the flags of the commands that render (render, apply).
func renderFlags() []cli.Flag {
	return append(planFlags(),
		&cli.StringFlag{Name: "binary", Value: render.DefaultBinary, Usage: "numa-partition's path on the target host, for the units that run it"},
		&cli.StringFlag{Name: "plan", Usage: "a reviewed plan `FILE` (plan -o json): use exactly it, and refuse when this host and config plan otherwise now"},
	)
}

// loadBundle is discover → config → plan → render, shared by render and
// apply so that both install exactly the same files; it logs the plan's and
// the bundle's warnings.
func loadBundle(c *cli.Context) (*planner.Plan, bundle.Bundle, error) {
	plan, _, err := loadPlan(c)
	if err != nil {
		return nil, bundle.Bundle{}, err
	}
	b, err := renderWith(c, plan)
	if err != nil {
		return nil, bundle.Bundle{}, fmt.Errorf("render: %w", err)
	}
	if file := c.String("plan"); file != "" {
		if err := checkReviewed(file, plan, asReviewed(c)); err != nil {
			return nil, bundle.Bundle{}, err
		}
	}
	logWarnings(append(slices.Clip(plan.Warnings), b.Warnings...))
	return plan, b, nil
}

// asReviewed plans this host and config as c's command does, with the
// machine's moving figures of a reviewed plan (checkReviewed).
func asReviewed(c *cli.Context) func(planner.Figures) (*planner.Plan, error) {
	return func(figures planner.Figures) (*planner.Plan, error) {
		plan, _, err := loadPlanAs(c, &figures)
		return plan, err
	}
}

// logWarnings logs a plan's (and its bundle's) warnings, for the commands
// that act on a plan without printing it: render, apply, config check.
func logWarnings(warnings []string) {
	for _, w := range warnings {
		slog.Warn("plan", "warning", w)
	}
}

// renderWith renders plan with the command line's render options.
func renderWith(c *cli.Context, plan *planner.Plan) (bundle.Bundle, error) {
	return render.RenderWith(*plan, render.Options{Binary: c.String("binary")})
}

// waveBundle is apply's WaveBundle for plan: the plan on the way from
// the one the host runs (previous, its plan file) to plan, in which the
// partitions take names have plan's settings (planner.Between), rendered
// as this command renders.
func waveBundle(c *cli.Context, plan *planner.Plan) func(previous []byte, take func(string) bool) (bundle.Bundle, error) {
	return func(previous []byte, take func(string) bool) (bundle.Bundle, error) {
		p, err := planner.BetweenFile("/"+bundle.PlanPath, previous, plan, take)
		if err != nil {
			return bundle.Bundle{}, err
		}
		return renderWith(c, p)
	}
}

func renderCommand() *cli.Command {
	return &cli.Command{
		Name:  "render",
		Usage: "write the systemd units, containerd and kubelet configs of the plan to a directory",
		Description: "Discovers the machine (--sysfs), plans with --config and renders, without\n" +
			"touching the host, exactly the files apply would install: nodeX.slice,\n" +
			"the system.slice/user.slice/machine.slice/init.scope locks, kubelet-nodeX and\n" +
			"containerd-nodeX units, each kubelet's KubeletConfiguration, the allocator\n" +
			"units and the hugepages oneshot. --out DIR writes them below DIR as they\n" +
			"would lie below / (DIR/etc/systemd/system/...). It also prints the kernel\n" +
			"command line that reserves the hugepages per node at boot (Linux >= 5.16).\n" +
			"docs/render.md explains every file and the kubelet arithmetic.",
		Flags: append(renderFlags(),
			&cli.StringFlag{Name: "out", Usage: "write the tree into this directory (must be empty or absent)"},
		),
		Action: func(c *cli.Context) error {
			format, err := outputFormat(c)
			if err != nil {
				return err
			}
			_, b, err := loadBundle(c)
			if err != nil {
				return err
			}
			if out := c.String("out"); out != "" {
				if err := writeTree(out, b); err != nil {
					return err
				}
			}
			if structured(format) {
				return writeData(c.App.Writer, format, kindRenderBundle, b)
			}
			return writeRenderSummary(c.App.Writer, c.String("out"), b)
		},
	}
}

// writeTree writes the bundle below dir. It refuses a non-empty dir so
// that no file of an older render is mistaken for part of this one. dir
// is opened once and every file is written below that descriptor by the
// one atomic write, following no link (fsutil.Root.RefusingLinks): root
// renders into directories others may own, and a link planted in the
// tree while it is written (#38: DIR/etc swapped for a link to /etc) is
// refused instead of written through.
func writeTree(dir string, b bundle.Bundle) error {
	r, err := openOutDir(dir)
	if err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	defer r.Close()
	entries, err := r.ReadDir(".")
	switch {
	case err != nil:
		return fmt.Errorf("--out %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("--out %s is not empty: choose an empty or new directory, so that no file of an older render is mixed in", dir)
	}
	for _, f := range b.Files {
		if err := r.WriteFile(f.Path, f.Content, f.Mode); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return nil
}

// openOutDir makes dir if it is absent and opens it, once, as a root
// that follows no link below it.
func openOutDir(dir string) (fsutil.Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fsutil.Root{}, err
	}
	if err := fsutil.NewRoot("/").MkdirAll(abs, 0o755); err != nil {
		return fsutil.Root{}, err
	}
	r, err := fsutil.OpenRoot(abs)
	if err != nil {
		return fsutil.Root{}, err
	}
	return r.RefusingLinks(), nil
}

func writeRenderSummary(w io.Writer, dir string, b bundle.Bundle) error {
	var err error
	p := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	if dir != "" {
		p("Wrote %d files below %s:\n", len(b.Files), dir)
	} else {
		p("%d files (write them with --out DIR):\n", len(b.Files))
	}
	for _, f := range b.Files {
		p("  /%s\n", f.Path)
	}
	p("\nUnits, in start order:\n")
	for _, u := range b.Units {
		action := "reload"
		switch {
		case u.Enable && u.Start:
			action = "enable + start"
		case u.Start:
			action = "start"
		}
		p("  %-40s %s\n", u.Name, action)
	}
	p("\nKernel command line (reserves hugepages per node at boot, Linux >= 5.16):\n")
	if b.KernelCmdline == "" {
		p("  (no hugepages planned)\n")
	} else {
		p("  %s\n", b.KernelCmdline)
	}
	return err
}

// maxPlanFile bounds a --plan file: a plan's JSON is a few KiB per
// partition, and a FIFO or a huge file there must not hang or bloat apply.
const maxPlanFile = 16 << 20

// readPlanFile reads a plan's JSON (plan -o json, or the rendered
// plan.json), strictly (planner.ParsePlan).
func readPlanFile(file string) (*planner.Plan, error) {
	data, err := fsutil.ReadFileBounded(file, maxPlanFile)
	if err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	return planner.ParsePlan(file, data)
}
