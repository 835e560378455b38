package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// releaseCommand is a placeholder until its issue lands.
func releaseCommand() *cli.Command {
	return &cli.Command{
		Name:  "release",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("release: not implemented yet")
		},
	}
}
