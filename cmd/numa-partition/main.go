// Command numa-partition turns one multi-socket Linux host into several
// Kubernetes nodes, one per NUMA partition.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

// exitCoder lets a command choose its exit status (status: 1 degraded).
type exitCoder interface{ ExitCode() int }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := runArgs(ctx, newApp(), os.Args)
	stop()
	if err != nil {
		var ec exitCoder
		if errors.As(err, &ec) {
			if msg := err.Error(); msg != "" {
				fmt.Fprintln(os.Stderr, "numa-partition:", msg)
			}
			os.Exit(ec.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "numa-partition:", err)
		os.Exit(2)
	}
}

func newApp() *cli.App {
	return &cli.App{
		Name:  "numa-partition",
		Usage: "turn one multi-socket host into several Kubernetes nodes, one per NUMA partition",
		Description: "numa-partition discovers the NUMA topology from sysfs, plans one partition per\n" +
			"socket (or per node group) from /etc/numa-partition/config.toml, renders a\n" +
			"systemd slice, a kubelet, a containerd and an allocator per partition, and\n" +
			"applies them transactionally over systemd's D-Bus API. Each partition becomes\n" +
			"one Kubernetes Node that pods target with a nodeSelector on its labels\n" +
			"(numa-type=red, ...).\n\n" +
			"Typical use: discover; config init > /etc/numa-partition/config.toml; plan;\n" +
			"apply --dry-run; apply; status. remove undoes apply.\n\n" +
			"Files: /etc/numa-partition/config.toml (config), /etc/numa-partition/plan.json\n" +
			"(the applied plan), /var/lib/numa-partition/applied.json (what apply wrote),\n" +
			"/run/numa-partition/NAME.sock (allocator API).\n\n" +
			"Flags may come before or after a command's arguments (simulate FILE -o json);\n" +
			"-- ends them. A command that takes no arguments refuses one.\n\n" +
			"Exit status: 0 success, 1 a negative answer (status degraded, diff differs,\n" +
			"admit rejected, ...), 2 error, 3 unknown command: EXIT STATUS below.\n" +
			"--output json or yaml prints one object that starts with apiVersion\n" +
			"numa-partition.io/v1alpha1 and its kind (Plan, Status, ...); docs/output-reference.md\n" +
			"has every kind's schema. Logs go to standard error (LOGGING below).",
		Version: currentBuild().Version,
		Flags:   globalFlags(),
		Before: func(c *cli.Context) error {
			return setupLogging(c)
		},
		Commands: refuseStrayArgs(withValueCompletion(withGlobalFlags([]*cli.Command{
			discoverCommand(),
			planCommand(),
			configCommand(),
			renderCommand(),
			hugepagesCommand(),
			kubeletStateCommand(),
			networkCommand(),
			viewCommand(),
			applyCommand(),
			diffCommand(),
			statusCommand(),
			removeCommand(),
			allocatorCommand(),
			admitCommand(),
			releaseCommand(),
			allocationsCommand(),
			simulateCommand(),
			versionCommand(),
			completionCommand(),
			manCommand(),
			bootUnitCommand(),
			outputReferenceCommand(),
		}))),
		EnableBashCompletion: true,
		HideHelpCommand:      true,
	}
}
