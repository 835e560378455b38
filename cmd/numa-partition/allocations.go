package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

const allocDefaultSocketDir = "/run/numa-partition"

// allocClientFlags are shared by admit, release and allocations: which
// daemon(s) to talk to.
func allocClientFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "partition", Aliases: []string{"p"}, Usage: "partition `NAME` (default: every partition / the one matching the pod)"},
		&cli.StringFlag{Name: "socket-dir", Value: allocDefaultSocketDir, Usage: "`DIR` holding the daemons' NAME.sock sockets"},
		&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "give up on a daemon that does not answer within this `DURATION`"},
	}
}

// allocContext bounds a client command by --timeout: a wedged daemon must
// not hang scripts forever.
func allocContext(c *cli.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Context, c.Duration("timeout"))
}

type allocTarget struct {
	partition string
	client    daemonapi.Client
}

// allocTargets are the daemons to ask: the one of --partition, or every
// NAME.sock in --socket-dir.
func allocTargets(c *cli.Context) ([]allocTarget, error) {
	dir := c.String("socket-dir")
	name, err := partitionFlag(c)
	if err != nil {
		return nil, err
	}
	if name != "" {
		return []allocTarget{{name, daemonapi.Client{Socket: filepath.Join(dir, name+".sock")}}}, nil
	}
	socks, err := filepath.Glob(filepath.Join(dir, "*.sock"))
	if err != nil {
		return nil, err
	}
	if len(socks) == 0 {
		return nil, fmt.Errorf("no allocator daemon sockets in %s: is any partition applied and its allocator running? (numa-partition status)", dir)
	}
	sort.Strings(socks)
	var out []allocTarget
	for _, s := range socks {
		out = append(out, allocTarget{strings.TrimSuffix(filepath.Base(s), ".sock"), daemonapi.Client{Socket: s}})
	}
	return out, nil
}

func allocationsCommand() *cli.Command {
	return &cli.Command{
		Name:  "allocations",
		Usage: "list the pods holding NUMA memory, per partition",
		Flags: allocClientFlags(),
		Action: func(c *cli.Context) error {
			format, err := outputFormat(c)
			if err != nil {
				return err
			}
			targets, err := allocTargets(c)
			if err != nil {
				return err
			}
			ctx, cancel := allocContext(c)
			defer cancel()
			lists, err := allocCollect(ctx, c.App.ErrWriter, targets)
			if structured(format) {
				if werr := writeData(c.App.Writer, format, kindAllocationList, allocationList{Items: lists}); werr != nil {
					return werr
				}
				return err
			}
			if werr := writeAllocations(c.App.Writer, c.App.ErrWriter, lists, tableWidth(format)); werr != nil {
				return werr
			}
			return err
		},
	}
}

// writeAllocations is allocations' table: one row per container. With
// no pod held anywhere it is one line on stderr instead, as kubectl's "No
// resources found", and no header a script would take for a row; with no
// daemon that answered, nothing (the error says why). width is the
// default table's budget, 0 for -o wide's every column.
func writeAllocations(w, stderr io.Writer, lists []daemonapi.AllocationsResponse, width int) error {
	var names []string
	held := false
	for _, l := range lists {
		names = append(names, l.Partition)
		held = held || len(l.Allocations) > 0
	}
	if !held {
		word := "partition"
		if len(lists) > 1 {
			word += "s"
		}
		if len(lists) > 0 {
			fmt.Fprintf(stderr, "No allocations found in %s %s.\n", word, strings.Join(shownAll(names), ", "))
		}
		return nil
	}
	// A pod's UID (36 columns) and whether it is pinned are -o wide's:
	// kubectl get pods shows no UID either.
	t := output.NewTable(width == 0, output.Column{Name: "PARTITION"}, output.Column{Name: "POD"}, output.Column{Name: "UID", Wide: true},
		output.Column{Name: "PINNED", Wide: true}, output.Column{Name: "CONTAINER"}, output.Column{Name: "NUMA"}, output.Column{Name: "MEMORY"})
	for _, l := range lists {
		for _, a := range l.Allocations {
			if len(a.Containers) == 0 {
				t.Row(shown(l.Partition), shown(a.Pod), shown(string(a.PodUID)), fmt.Sprint(a.Pinned), "-", "-", "-")
			}
			for _, ctr := range a.Containers {
				t.Row(shown(l.Partition), shown(a.Pod), shown(string(a.PodUID)), fmt.Sprint(a.Pinned), shown(ctr.Name), ctr.NUMANodes.String(), allocResourceList(ctr.Memory))
			}
		}
	}
	return t.Write(w)
}

// allocCollect asks every target; a daemon that does not answer is reported
// as a warning on stderr and by the exit status 1, not silently skipped.
func allocCollect(ctx context.Context, stderr io.Writer, targets []allocTarget) ([]daemonapi.AllocationsResponse, error) {
	lists := []daemonapi.AllocationsResponse{}
	var failed []string
	for _, t := range targets {
		l, err := t.client.Allocations(ctx)
		if err != nil {
			failed = append(failed, fmt.Sprintf("allocations: partition %s: %v", t.partition, err))
			continue
		}
		if l.Allocations == nil {
			// An empty list, in --output json too, not null: a daemon
			// from before it said [] may send null.
			l.Allocations = []allocator.Allocation{}
		}
		lists = append(lists, l)
	}
	if len(failed) > 0 {
		warnAll(stderr, failed...)
		return lists, exitError{code: 1, msg: fmt.Sprintf("%d of %d allocator daemons did not answer", len(failed), len(targets))}
	}
	return lists, nil
}
