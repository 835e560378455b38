package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// applyCommand is a placeholder until its issue lands.
func applyCommand() *cli.Command {
	return &cli.Command{
		Name:  "apply",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("apply: not implemented yet")
		},
	}
}
