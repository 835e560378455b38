package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/render"
)

// renderFlags are the flags of the commands that render (render, apply).
func renderFlags() []cli.Flag {
	return []cli.Flag{
		hostnameFlag(),
		&cli.StringFlag{Name: "binary", Value: render.DefaultBinary, Usage: "numa-partition's path on the target host, for the units that run it"},
		&cli.StringFlag{Name: "plan", Usage: "a reviewed plan `FILE` (plan -o json): use exactly it, and refuse when this host and config plan otherwise now"},
	}
}

// loadBundle is discover → config → plan → render, shared by render and
// apply so that both install exactly the same files; it logs the plan's and
// the bundle's warnings.
func loadBundle(c *cli.Context) (*planner.Plan, render.Bundle, error) {
	plan, _, err := loadPlan(c)
	if err != nil {
		return nil, render.Bundle{}, err
	}
	if file := c.String("plan"); file != "" {
		if plan, err = reviewedPlan(file, plan); err != nil {
			return nil, render.Bundle{}, err
		}
	}
	b, err := render.RenderWith(*plan, render.Options{Binary: c.String("binary")})
	if err != nil {
		return nil, render.Bundle{}, fmt.Errorf("render: %w", err)
	}
	for _, w := range append(plan.Warnings, b.Warnings...) {
		slog.Warn("plan", "warning", w)
	}
	return plan, b, nil
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
				return writeData(c.App.Writer, format, b)
			}
			return writeRenderSummary(c.App.Writer, c.String("out"), b)
		},
	}
}

// writeTree writes the bundle below dir. It refuses a non-empty dir so
// that no file of an older render is mistaken for part of this one.
func writeTree(dir string, b render.Bundle) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("--out %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("--out %s is not empty: choose an empty or new directory, so that no file of an older render is mixed in", dir)
	}
	for _, f := range b.Files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := os.WriteFile(path, f.Content, f.Mode); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return nil
}

func writeRenderSummary(w io.Writer, dir string, b render.Bundle) error {
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

// readPlanFile reads a plan's JSON (plan -o json, or the rendered
// plan.json; other keys, such as plan's nodeResources, are ignored).
func readPlanFile(file string) (*planner.Plan, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	var plan planner.Plan
	if err := json.Unmarshal(data, &plan); err != nil {
		return nil, fmt.Errorf("%s: not a plan (plan -o json): %w", file, err)
	}
	return &plan, nil
}

// reviewedPlan is the plan of file when it is what this host and config
// plan now: what was reviewed is applied, or nothing is.
func reviewedPlan(file string, now *planner.Plan) (*planner.Plan, error) {
	reviewed, err := readPlanFile(file)
	if err != nil {
		return nil, err
	}
	a, err := json.MarshalIndent(reviewed, "", "  ")
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(now, "", "  ")
	if err != nil {
		return nil, err
	}
	if bytes.Equal(a, b) {
		return reviewed, nil
	}
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return nil, fmt.Errorf("%s is not what this host and config plan now (line %d of its JSON: reviewed %s, now %s): run plan again and review it",
				file, i+1, strings.TrimSpace(la[i]), strings.TrimSpace(lb[i]))
		}
	}
	return nil, fmt.Errorf("%s is not what this host and config plan now (%d lines of JSON reviewed, %d now): run plan again and review it", file, len(la), len(lb))
}
