package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// admitCommand is a placeholder until its issue lands.
func admitCommand() *cli.Command {
	return &cli.Command{
		Name:  "admit",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("admit: not implemented yet")
		},
	}
}
