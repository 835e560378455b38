// Command numa-partition turns one multi-socket Linux host into several
// Kubernetes nodes, one per NUMA partition.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	os.Exit(exitStatus(err, os.Stderr))
}

// exitStatus prints err to stderr, once and prefixed with the tool's
// name, and is the status to exit with: the error's own (exitCoder), else
// 2. An exitCoder without a message says nothing (status: degraded has
// printed its report).
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	code := 2
	var ec exitCoder
	if errors.As(err, &ec) {
		code = ec.ExitCode()
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(stderr, journalPrefix(stderr, 3)+"numa-partition:", msg)
	}
	return code
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
			"Typical use: discover; config init --write (/etc/numa-partition/config.toml);\n" +
			"plan; apply --dry-run; apply; status. remove undoes apply.\n\n" +
			"Files: /etc/numa-partition/config.toml (config), /etc/numa-partition/plan.json\n" +
			"(the applied plan), /var/lib/numa-partition/applied.json (what apply wrote),\n" +
			"/run/numa-partition/NAME.sock (allocator API).\n\n" +
			"Flags may come before or after a command's arguments (simulate FILE -o json);\n" +
			"-- ends them. A command that takes no arguments refuses one. help CMD, or\n" +
			"CMD --help, prints a command's help (help CMD SUBCMD a subcommand's); a bad\n" +
			"flag is one line on standard error naming it, and where the usage is.\n\n" +
			"Exit status: 0 success, 1 a negative answer (status degraded, diff differs,\n" +
			"admit rejected, ...), 2 error, 3 unknown command: EXIT STATUS below.\n" +
			"--output json or yaml prints one object that starts with apiVersion\n" +
			"numa-partition.io/v1alpha1 and its kind (Plan, Status, ...); docs/output-reference.md\n" +
			"has every kind's schema. Logs go to standard error (LOGGING below).",
		Version: currentBuild().Version,
		Flags:   globalFlags(),
		Action:  appAction,
		Before: func(c *cli.Context) error {
			return setupLogging(c)
		},
		Commands: withExamples(withUsageErrors(refuseStrayArgs(withValueCompletion(withGlobalFlags([]*cli.Command{
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
		}))))),
		EnableBashCompletion: true,
		BashComplete:         completeWord,
		HideHelpCommand:      true,
		// Errors come back to main, which prints each once, prefixed, and
		// exits with its status: urfave/cli printed an exitCoder's message
		// itself, unprefixed, and exited before main saw it.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   usageError,
	}
}
