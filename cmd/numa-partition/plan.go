package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// planCommand is a placeholder until its issue lands.
func planCommand() *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("plan: not implemented yet")
		},
	}
}
