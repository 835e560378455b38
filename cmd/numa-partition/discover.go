package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// discoverCommand is a placeholder until its issue lands.
func discoverCommand() *cli.Command {
	return &cli.Command{
		Name:  "discover",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("discover: not implemented yet")
		},
	}
}
