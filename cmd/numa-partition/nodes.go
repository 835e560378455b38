package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
)

// nodeFlags are the flags about the partitions' Nodes a command disrupts,
// the same for remove and apply (verb), so that --drain, --force and the
// rest mean one thing: kubectl drain's.
func nodeFlags(verb string) []cli.Flag {
	kubeconfig := "an identity allowed to cordon and delete Nodes and evict pods (examples/drain-rbac.yaml), used instead of each partition's kubelet credentials; the Nodes are then deleted after the kubelets stop"
	drainUsage := "cordon and drain each partition's Node first, honouring PodDisruptionBudgets"
	force := "remove even while pods are bound to the Nodes (or when the API server cannot say); with --drain, also evict pods no controller manages (they are gone for good)"
	if verb == "apply" {
		kubeconfig = "an identity allowed to cordon and delete Nodes and evict pods (examples/drain-rbac.yaml), used instead of each partition's kubelet credentials; the Nodes of partitions the plan no longer has are then deleted after their kubelets stop"
		drainUsage = "cordon and drain, first, the Nodes this apply disrupts (a kubelet restarting on fresh CPU/Memory Manager state with pods pinned, a partition the plan no longer has), honouring PodDisruptionBudgets; uncordon the first kind once Ready again"
		force = "apply even while pods are bound to the Node of a partition the plan no longer has (or when the API server cannot say); with --drain, also evict pods no controller manages (they are gone for good)"
	}
	flags := []cli.Flag{
		&cli.StringFlag{Name: "kubeconfig", Usage: kubeconfig},
		&cli.BoolFlag{Name: "drain", Usage: drainUsage},
		&cli.BoolFlag{Name: "force", Usage: force},
		&cli.BoolFlag{Name: "delete-emptydir-data", Usage: "with --drain, also evict pods with emptyDir volumes (their data is lost)"},
		&cli.DurationFlag{Name: "drain-timeout", Value: drain.DefaultTimeout, Usage: "how long the drain of one Node may take (evictions a PodDisruptionBudget holds back are retried until then)"},
	}
	if verb == "apply" {
		flags = append(flags, &cli.IntFlag{Name: "max-unavailable", Value: 1,
			Usage: "with --drain, how many partitions' Nodes are drained, changed and let back in together; apply goes in waves of this many, so a Deployment spread over them under a PodDisruptionBudget keeps serving"})
	}
	return flags
}

// nodeOptions reads nodeFlags. The drain's progress goes to stderr, one
// line per change: the drain polls every second while pods terminate,
// and a line per poll buried the news (seen in the e2e: 20 identical
// lines for one Node).
func nodeOptions(c *cli.Context) (nodes.Options, error) {
	if c.Bool("delete-emptydir-data") && !c.Bool("drain") {
		return nodes.Options{}, fmt.Errorf("--delete-emptydir-data: allowed only with --drain")
	}
	maxUnavailable := 0
	if c.IsSet("max-unavailable") {
		if maxUnavailable = c.Int("max-unavailable"); maxUnavailable < 1 {
			return nodes.Options{}, fmt.Errorf("--max-unavailable %d: allowed is 1 or more", maxUnavailable)
		}
		if !c.Bool("drain") {
			return nodes.Options{}, fmt.Errorf("--max-unavailable: allowed only with --drain")
		}
	}
	var lastProgress string
	return nodes.Options{
		Kubeconfig: c.String("kubeconfig"), Drain: c.Bool("drain"), Force: c.Bool("force"),
		DeleteEmptyDirData: c.Bool("delete-emptydir-data"), Timeout: c.Duration("drain-timeout"),
		MaxUnavailable: maxUnavailable,
		Progress: func(p drain.Progress) {
			if line := p.String(); line != lastProgress {
				lastProgress = line
				fmt.Fprintln(c.App.ErrWriter, line)
			}
		},
	}, nil
}
