package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "write or check the config file",
		Subcommands: []*cli.Command{
			{
				Name:  "init",
				Usage: "print a commented config for this machine",
				Description: "Discovers the machine (--sysfs) and prints a config with every key and its\n" +
					"default, the partitions it makes here, and the machine's page sizes and\n" +
					"CPU-less nodes. Save it to /etc/numa-partition/config.toml and edit.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "hostname", Usage: "host name to write into the comments (default: this machine's)"},
				},
				Action: func(c *cli.Context) error {
					topo, err := numa.NewFS(c.String("sysfs")).Discover()
					if err != nil {
						return fmt.Errorf("discover: %w", err)
					}
					host := c.String("hostname")
					if host == "" {
						host, _ = os.Hostname()
					}
					_, err = c.App.Writer.Write(partition.InitConfig(topo, host))
					return err
				},
			},
			{
				Name:  "check",
				Usage: "validate --config against this machine; prints nothing when it plans",
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
