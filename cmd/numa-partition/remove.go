package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/slices/apply"
)

func removeCommand() *cli.Command {
	return &cli.Command{
		Name:  "remove",
		Usage: "undo apply: stop and disable the partition units, delete their files, reload",
		Description: "Reads the applied record (/var/lib/numa-partition/applied.json), stops and\n" +
			"disables every unit apply started or enabled, deletes the files it wrote (and\n" +
			"puts back any file it replaced), drops the runtime CPU settings and cpuset v1\n" +
			"groups, sets the hugepage pools back, daemon-reloads and deletes the record.\n" +
			"Nothing applied: nothing to do. A failing action does not stop the others;\n" +
			"the record is then kept so that remove can be run again.",
		Flags: append(hostFlags(), &cli.BoolFlag{Name: "dry-run", Usage: "list what remove would do, and do nothing"}),
		Action: func(c *cli.Context) error {
			return onHost(c, func(h host) error {
				rep, err := apply.Remove(c.Context, apply.Options{Root: h.root, Sysfs: h.sysfs, Systemd: h.systemd, DryRun: c.Bool("dry-run")})
				if err != nil {
					return fmt.Errorf("remove: %w", err)
				}
				if structured(h.format) {
					return writeData(c.App.Writer, h.format, rep)
				}
				var b strings.Builder
				if rep.Generation == 0 {
					b.WriteString("nothing applied, nothing to remove\n")
				} else {
					verb := "removed"
					if rep.DryRun {
						verb = "would remove (dry run, nothing done)"
					}
					fmt.Fprintf(&b, "%s generation %d in %s:\n", verb, rep.Generation, seconds(rep.Seconds))
					for _, a := range rep.Actions {
						fmt.Fprintf(&b, "  %s\n", a)
					}
				}
				_, err = fmt.Fprint(c.App.Writer, b.String())
				return err
			})
		},
	}
}
