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
	err := newApp().RunContext(ctx, os.Args)
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
		Flags: globalFlags(),
		Before: func(c *cli.Context) error {
			return setupLogging(c)
		},
		Commands: []*cli.Command{
			discoverCommand(),
			planCommand(),
			configCommand(),
			renderCommand(),
			hugepagesCommand(),
			applyCommand(),
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
		},
		EnableBashCompletion: true,
		HideHelpCommand:      true,
	}
}
