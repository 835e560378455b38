package main

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

func releaseCommand() *cli.Command {
	return &cli.Command{
		Name:      "release",
		Usage:     "free the NUMA memory of a pod by its UID",
		ArgsUsage: "POD-UID",
		Description: "Without --partition every partition's daemon is asked; the UID is released where it\n" +
			"is held. Exit status 1 when no partition holds it.",
		Flags: allocClientFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 || c.Args().First() == "" {
				return fmt.Errorf("release takes exactly one pod UID after its flags (numa-partition release [--partition NAME] UID), got %d arguments: %q", c.NArg(), c.Args().Slice())
			}
			uid := c.Args().First()
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
			var problems []error
			for _, t := range targets {
				resp, err := t.client.Release(ctx, uid)
				var apiErr *daemonapi.APIError
				if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
					continue
				}
				if err != nil {
					problems = append(problems, fmt.Errorf("%s: %w", t.partition, err))
					continue
				}
				if structured(format) {
					return writeData(c.App.Writer, format, kindRelease, resp)
				}
				fmt.Fprintf(c.App.Writer, "released pod %s in partition %s\n", uid, resp.Partition)
				return nil
			}
			if len(problems) > 0 {
				return fmt.Errorf("pod %s not released: %w", uid, errors.Join(problems...))
			}
			return exitError{code: 1, msg: fmt.Sprintf("pod %s has no allocation in %s", uid, allocTargetNames(targets))}
		},
	}
}

func allocTargetNames(ts []allocTarget) string {
	if len(ts) == 1 {
		return "partition " + ts[0].partition
	}
	names := ""
	for i, t := range ts {
		if i > 0 {
			names += ", "
		}
		names += t.partition
	}
	return "any partition (" + names + ")"
}
