package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// versionCommand is a placeholder until its issue lands.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "not implemented yet",
		Action: func(*cli.Context) error {
			return errors.New("version: not implemented yet")
		},
	}
}
