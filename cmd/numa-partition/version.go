package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// Set by the Makefile through -ldflags; the module's build info is the
// fallback for `go install`.
var (
	version = ""
	commit  = ""
)

// buildInfo is what `version --output json` prints; the field names are
// part of the stable JSON output.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// -v is the log verbosity, as kubectl's -v=N (globalFlags), so the
// version flag is --version alone: urfave/cli's default also named it -v,
// and `numa-partition -v=4 apply` printed the version.
func init() {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version (the version command prints the commit and Go version too)", DisableDefaultText: true}
}

func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && b.Commit == "" {
				b.Commit = s.Value
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print version, commit and Go version",
		Action: func(c *cli.Context) error {
			format, err := outputFormat(c)
			if err != nil {
				return err
			}
			b := currentBuild()
			if structured(format) {
				return writeData(c.App.Writer, format, kindVersion, b)
			}
			_, err = fmt.Fprintf(c.App.Writer, "numa-partition %s\ncommit: %s\ngo: %s\nplatform: %s\n", b.Version, b.Commit, b.GoVersion, b.Platform)
			return err
		},
	}
}
