package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// removeCommand is a placeholder until its issue lands.
func removeCommand() *cli.Command {
	return &cli.Command{
		Name:  "remove",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("remove: not implemented yet")
		},
	}
}
