package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// configCommand is a placeholder until its issue lands.
func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("config: not implemented yet")
		},
	}
}
