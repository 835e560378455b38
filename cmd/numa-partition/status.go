package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// statusCommand is a placeholder until its issue lands.
func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("status: not implemented yet")
		},
	}
}
