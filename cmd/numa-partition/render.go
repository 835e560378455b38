package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// renderCommand is a placeholder until its issue lands.
func renderCommand() *cli.Command {
	return &cli.Command{
		Name:  "render",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("render: not implemented yet")
		},
	}
}
