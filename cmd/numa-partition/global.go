package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"
)

const defaultConfigPath = "/etc/numa-partition/config.toml"

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sysfs", Value: "/sys", Usage: "sysfs root to discover the machine from (a dump directory works too)", EnvVars: []string{"NUMA_PARTITION_SYSFS"}},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "table", Usage: "output format: table or json"},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: defaultConfigPath, Usage: "config file (TOML)", EnvVars: []string{"NUMA_PARTITION_CONFIG"}},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "log level: debug, info, warn, error"},
	}
}

// setupLogging sends slog to stderr. Under systemd (JOURNAL_STREAM set)
// timestamps are left out: journald adds its own.
func setupLogging(c *cli.Context) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return fmt.Errorf("--log-level %q: allowed are debug, info, warn, error", c.String("log-level"))
	}
	opts := &slog.HandlerOptions{Level: level}
	if os.Getenv("JOURNAL_STREAM") != "" {
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, opts)))
	return nil
}

// outputFormat validates --output.
func outputFormat(c *cli.Context) (string, error) {
	switch f := c.String("output"); f {
	case "table", "json":
		return f, nil
	default:
		return "", fmt.Errorf("--output %q: allowed are table, json", f)
	}
}

// writeJSON is the one JSON writer for machine-readable output: indented,
// trailing newline, stable field order from the struct definitions.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// exitError carries an exit status with an optional message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }
func (e exitError) ExitCode() int { return e.code }
