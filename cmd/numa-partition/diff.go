package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:  "diff",
		Usage: "show how the files on this host differ from what apply would write; exit 1 when they do",
		Description: "Discovers, plans and renders as apply does, then compares the rendered files\n" +
			"with those below --root (and the files the last apply recorded that are no\n" +
			"longer rendered) and prints a unified diff. Needs no systemd: unit states are\n" +
			"not compared (apply --dry-run does that). Exit status 0 when nothing differs,\n" +
			"1 when something does, 2 on errors, as diff(1).",
		Flags: append(renderFlags(), &cli.StringFlag{Name: "root", Value: "/", Usage: "the host's root directory to compare below"}),
		Action: func(c *cli.Context) error {
			root, _ := hostRoot(c)
			mode, err := diffCgroupMode(c, root)
			if err != nil {
				return err
			}
			_, b, err := loadBundle(c)
			if err != nil {
				return err
			}
			text, changed, err := transaction.FileDiff(root, b, mode)
			if err != nil {
				return fmt.Errorf("diff: %w", err)
			}
			if _, err := io.WriteString(c.App.Writer, text); err != nil {
				return err
			}
			if changed {
				return exitError{code: 1}
			}
			return nil
		},
	}
}

// diffCgroupMode is the cgroup mode diff plans and compares for:
// --cgroup-mode's, else as apply would take it (offline, a root without
// a system bus, the applied record's first: #38, diff --root failed
// "detecting the cgroup mode" on a root without sys/ whose record says
// it). It becomes --cgroup-mode's value, so that the plan has it too.
func diffCgroupMode(c *cli.Context, root string) (transaction.CgroupMode, error) {
	mode, err := cgroupModeFlag(c)
	if err != nil || mode != "" {
		return mode, err
	}
	off, err := offline(c, true)
	if err != nil {
		return "", err
	}
	if mode, err = record.CgroupModeOf(root, off); err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	return mode, c.Set("cgroup-mode", string(mode))
}

// cgroupModeFlagDef is --cgroup-mode, for the commands that plan: the
// plan depends on it (each kubelet is shown its partition as the machine
// on cgroup v1 only), and diff and apply --dry-run may read a root
// without its cgroup file system.
func cgroupModeFlagDef() cli.Flag {
	return &cli.StringFlag{Name: "cgroup-mode", Usage: "`MODE` of the host (unified, hybrid, legacy): plan for it (kubelets are shown their partition as the machine on hybrid and legacy only; nri mode needs unified) and check against it; default: read ROOT/sys/fs/cgroup (/ for commands without --root), or offline the applied record's"}
}

// cgroupModeFlag is --cgroup-mode's value, "" when not given.
func cgroupModeFlag(c *cli.Context) (transaction.CgroupMode, error) {
	mode := transaction.CgroupMode(c.String("cgroup-mode"))
	switch mode {
	case "", transaction.CgroupV2, transaction.CgroupHybrid, transaction.CgroupV1:
		return mode, nil
	}
	return "", fmt.Errorf("--cgroup-mode %q: allowed are %s, %s, %s", mode, transaction.CgroupV2, transaction.CgroupHybrid, transaction.CgroupV1)
}
