package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/apply"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
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
			"the record is then kept so that remove can be run again.\n\n" +
			"The partitions' Kubernetes Nodes: before it changes anything, remove refuses\n" +
			"while pods other than DaemonSet, mirror and finished pods are bound to one,\n" +
			"unless --force; --drain cordons and drains each Node, one at a time, through\n" +
			"the Eviction API, which honours PodDisruptionBudgets. Both with each\n" +
			"partition's own kubelet credentials, or with --kubeconfig; with --kubeconfig\n" +
			"the Nodes are also deleted once the kubelets are stopped, without they stay\n" +
			"behind NotReady (a warning says so). The identity needs the role in\n" +
			"examples/drain-rbac.yaml. docs/apply.md has the details.",
		Flags: append(append(hostFlags(),
			&cli.BoolFlag{Name: "dry-run", Usage: "list what remove would do (and the pods bound to each Node), and do nothing"}),
			nodeFlags("remove")...,
		),
		Action: func(c *cli.Context) error {
			nodes, err := nodeOptions(c)
			if err != nil {
				return err
			}
			return onHost(c, c.Bool("dry-run"), func(h host) error {
				rep, err := apply.Remove(c.Context, apply.Options{Root: h.root, Sysfs: h.sysfs, Systemd: h.systemd, DryRun: c.Bool("dry-run"), Nodes: nodes, Offline: h.offline})
				if err != nil {
					return fmt.Errorf("remove: %w", err)
				}
				if structured(h.format) {
					err = writeData(c.App.Writer, h.format, kindRemoveReport, rep)
				} else {
					err = writeRemoveReport(c.App.Writer, rep)
				}
				warnAll(c.App.ErrWriter, rep.Warnings...)
				return err
			})
		},
	}
}

// writeRemoveReport is remove's table output; its warnings go to
// standard error (warnAll).
func writeRemoveReport(w io.Writer, rep *apply.RemoveReport) error {
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
		for _, k := range rep.Kept {
			fmt.Fprintf(&b, "  keep %s: %s\n", k.Path, k.Reason)
		}
		for _, n := range rep.Nodes {
			fmt.Fprintf(&b, "  %s\n", nodeRemovalLine(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// nodeRemovalLine is one partition's Node in remove's table output.
func nodeRemovalLine(n nodes.Removal) string {
	if n.Node == "" {
		return fmt.Sprintf("partition %s: %s", n.Partition, n.Note)
	}
	s := fmt.Sprintf("partition %s, Node %s:", n.Partition, n.Node)
	if d := n.Drain; d != nil {
		switch {
		case !d.Registered:
			s += " not registered, nothing to drain;"
		default:
			s += fmt.Sprintf(" drained in %s (%d evicted);", seconds(d.Seconds), d.Evicted)
		}
	}
	if n.Checked {
		var stay []string
		for _, p := range n.Pods {
			if p.Action != drain.Evict {
				stay = append(stay, p.String()+" ("+p.Reason+")")
			}
		}
		if n.Drain == nil {
			s += fmt.Sprintf(" %d pods bound;", len(n.Pods))
		}
		if len(stay) > 0 {
			s += " not evicted: " + drain.Name(stay) + ";"
		}
	}
	switch {
	case n.Deleted:
		s += " deleted"
	case n.Note != "":
		s += " " + n.Note
	default:
		s += " left in the API server"
	}
	return s
}
