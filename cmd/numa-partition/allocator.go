package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// allocatorCommand is a placeholder until its issue lands.
func allocatorCommand() *cli.Command {
	return &cli.Command{
		Name:  "allocator",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("allocator: not implemented yet")
		},
	}
}
