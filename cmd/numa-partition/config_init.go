package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner/configref"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "write or check the config file",
		Subcommands: []*cli.Command{
			{
				Name:  "init",
				Usage: "print a commented config for this machine",
				Description: "Discovers the machine (--sysfs) and prints a config with every key, its\n" +
					"description and default, the partitions it makes here, and the machine's\n" +
					"page sizes and CPU-less nodes. Save it to /etc/numa-partition/config.toml\n" +
					"and edit. With --generic it prints the config the package installs: every\n" +
					"key commented out at its default, tied to no machine (nothing is read).",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "hostname", Usage: "host name to write into the comments (default: this machine's)"},
					&cli.BoolFlag{Name: "generic", Usage: "print the machine-independent default config (packaging/config.toml)"},
				},
				Action: func(c *cli.Context) error {
					if c.Bool("generic") {
						if c.IsSet("hostname") {
							return exitError{code: 2, msg: "config init: --hostname describes a machine; --generic writes for none"}
						}
						_, err := c.App.Writer.Write(configref.GenericConfig())
						return err
					}
					topo, err := numa.NewFS(globalString(c, "sysfs")).WithContext(c.Context).Discover()
					if err != nil {
						return fmt.Errorf("discover: %w", err)
					}
					host := c.String("hostname")
					if host == "" {
						host, _ = os.Hostname()
					}
					_, err = c.App.Writer.Write(configref.InitConfig(topo, host))
					return err
				},
			},
			{
				Name:  "reference",
				Usage: "print every config key with its type, default and description (markdown)",
				Description: "Prints the reference of the config file as markdown, generated from the\n" +
					"code that reads it; docs/config-reference.md is this output.",
				Action: func(c *cli.Context) error {
					_, err := c.App.Writer.Write(configref.ReferenceMarkdown())
					return err
				},
			},
			{
				Name:  "check",
				Usage: "validate --config against this machine; prints nothing when it plans",
				Flags: planFlags(),
				Action: func(c *cli.Context) error {
					if _, err := loadConfig(c); err != nil {
						return err
					}
					_, _, err := loadPlan(c)
					return err
				},
			},
		},
	}
}
