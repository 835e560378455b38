package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// allocationsCommand is a placeholder until its issue lands.
func allocationsCommand() *cli.Command {
	return &cli.Command{
		Name:  "allocations",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("allocations: not implemented yet")
		},
	}
}
