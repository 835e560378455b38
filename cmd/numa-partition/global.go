package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"k8s.io/klog/v2"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

const defaultConfigPath = config.DefaultConfigPath

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sysfs", Value: "/sys", Usage: "sysfs root to discover the machine from (a dump directory works too)", EnvVars: []string{"NUMA_PARTITION_SYSFS"}},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "table", Usage: "output format: table, wide (every column), json, yaml, jsonpath=TEMPLATE or jsonpath-file=FILE (kubectl's; on the JSON object) (plan: also svg, dot)"},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: defaultConfigPath, Usage: "config file (TOML)", EnvVars: []string{"NUMA_PARTITION_CONFIG"}},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "log level (to standard error): debug, info, warn, error"},
		&cli.StringFlag{Name: "log-format", Value: logFormatText, Usage: "log format (to standard error): text (key=value) or json, one object a line; under systemd each line starts with its journald priority"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "log errors only: --log-level error"},
		&cli.IntFlag{Name: "v", Usage: "log verbosity `N`, as kubectl's -v=N: 0 is --log-level info, 1 or more debug (the version is --version)"},
	}
}

// setupLogging sends slog to stderr at the level logLevel reads, in
// --log-format, with journald's priorities when standard error is the
// journal (stderrIsJournal): newLogHandler. It is the one place the log is set up, for the
// daemons too. It runs before the app's command and again before each
// command (withGlobalFlags), so that --log-level, --log-format, -q and
// -v after the command count too.
func setupLogging(c *cli.Context) error {
	level, err := logLevel(c)
	if err != nil {
		return err
	}
	h, err := newLogHandler(os.Stderr, globalString(c, "log-format"), level, stderrIsJournal())
	if err != nil {
		return err
	}
	slog.SetDefault(slog.New(h))
	// client-go logs through klog (a request's unreadable answer, the API
	// server's warnings, a reflector's broken watch): into the same log,
	// level and format, not klog's own lines on stderr.
	klog.SetSlogLogger(slog.Default())
	return nil
}

// levelFlag is one of the flags that choose the log level, as typed, and
// the level it chooses.
type levelFlag struct {
	typed string
	level slog.Level
}

// logLevel is the level that --log-level, -q (error) or -v N (kubectl's
// verbosity) ask for, info by default. Two of them that ask for different
// levels are refused, naming both.
func logLevel(c *cli.Context) (slog.Level, error) {
	var given []levelFlag
	if globalBool(c, "quiet") {
		given = append(given, levelFlag{"--quiet", slog.LevelError})
	}
	name := globalString(c, "log-level")
	var level slog.Level
	if err := level.UnmarshalText([]byte(name)); err != nil {
		return 0, fmt.Errorf("--log-level %q: allowed are debug, info, warn, error", name)
	}
	if globalIsSet(c, "log-level") {
		given = append(given, levelFlag{"--log-level " + name, level})
	}
	if globalIsSet(c, "v") {
		v, err := verbosityLevel(globalContext(c, "v").Int("v"))
		if err != nil {
			return 0, err
		}
		given = append(given, v)
	}
	for _, f := range given[min(1, len(given)):] {
		if f.level != given[0].level {
			return 0, fmt.Errorf("%s and %s: choose one (--quiet is --log-level error, -v 0 --log-level info, -v 1 or more --log-level debug)", given[0].typed, f.typed)
		}
	}
	if len(given) > 0 {
		level = given[0].level
	}
	return level, nil
}

// verbosityLevel maps kubectl's -v=N onto the log's levels: 0, kubectl's
// default, is info; any more is debug, the one more detailed level the
// tool logs at (kubectl's -v=4 and up is its debug output).
func verbosityLevel(n int) (levelFlag, error) {
	typed := fmt.Sprintf("-v %d", n)
	switch {
	case n < 0:
		return levelFlag{}, fmt.Errorf("%s: allowed are 0 (--log-level info) and more (--log-level debug)", typed)
	case n == 0:
		return levelFlag{typed, slog.LevelInfo}, nil
	default:
		return levelFlag{typed, slog.LevelDebug}, nil
	}
}

// allowedOutputs are the --output values the commands printing objects
// take, as the errors list them.
const allowedOutputs = "table, wide, json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE (plan: also svg, dot)"

// jsonpathFilePrefix is --output jsonpath-file=FILE: the template read
// from FILE, as kubectl's.
const jsonpathFilePrefix = "jsonpath-file="

// outputFormat validates --output: "table", "wide", "json", "yaml" or
// "jsonpath=TEMPLATE" (a jsonpath-file's template read and returned as
// jsonpath=), the template parsed before any work is done.
func outputFormat(c *cli.Context) (string, error) {
	given := globalString(c, "output")
	f := given
	if file, ok := strings.CutPrefix(f, jsonpathFilePrefix); ok {
		data, err := fsutil.ReadFileBounded(file, 1<<20)
		if err != nil {
			return "", fmt.Errorf("--output %s: %w", f, err)
		}
		f = output.JSONPathPrefix + string(data) // kept whole, as kubectl: a last newline ends the output
	}
	switch {
	case f == "" || f == "table":
		return "table", nil
	case f == "wide" || f == "json" || f == "yaml":
		return f, nil
	case strings.HasPrefix(f, output.JSONPathPrefix):
		if _, err := output.ParseJSONPath(strings.TrimPrefix(f, output.JSONPathPrefix)); err != nil {
			if given != f {
				return "", fmt.Errorf("--output %s: %w", given, err)
			}
			return "", err
		}
		return f, nil
	default:
		return "", fmt.Errorf("--output %q: allowed are %s", f, allowedOutputs)
	}
}

// structured says whether format is one for programs (json, yaml,
// jsonpath=).
func structured(format string) bool {
	return format == "json" || format == "yaml" || strings.HasPrefix(format, output.JSONPathPrefix)
}

// tableWidth is the width budget of a table in format: output.Width for
// the default table, none (0) with -o wide, which prints every column
// and every list whole.
func tableWidth(format string) int {
	if format == "wide" {
		return 0
	}
	return output.Width
}

// writeJSON writes v as indented JSON, without the envelope writeData
// gives --output's objects (simulate's table ends with the tables).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// withGlobalFlags gives every command the global flags too, so that they
// work after the command as kubectl users type them (plan -o json) as
// well as before it. globalString reads whichever was set.
func withGlobalFlags(cmds []*cli.Command) []*cli.Command {
	for _, cmd := range cmds {
		have := map[string]bool{}
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				have[n] = true
			}
		}
		for _, f := range globalFlags() {
			if !have[f.Names()[0]] {
				cmd.Flags = append(cmd.Flags, f)
			}
		}
		before := cmd.Before
		// (urfave/cli adds a help subcommand to each command when it runs.)
		parent := len(cmd.Subcommands) > 0
		cmd.Before = func(c *cli.Context) error {
			if err := setupLogging(c); err != nil {
				return err
			}
			path := commandPath(c)
			if f := globalString(c, "output"); f == "" && globalIsSet(c, "output") {
				// -o "" was read as the default table: a script's empty
				// variable is a mistake to say, not a format (#38).
				return fmt.Errorf(`--output "": allowed are %s`, allowedOutputs)
			} else if !parent && !printsObjects(path) && f != "" && f != "table" {
				return fmt.Errorf("--output %s: %s prints no objects, only text; these do: %s", f, path, strings.Join(objectCommands(), ", "))
			}
			if err := positiveDurations(c, cmd.Flags); err != nil {
				return err
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
		withGlobalFlags(cmd.Subcommands)
	}
	return cmds
}

// positiveDurations refuses a duration flag of the command at 0 or
// below: each is a timeout, and --job-timeout -1s or --probe-timeout 0
// were taken and then failed, or never timed out, far from the flag
// (#38).
func positiveDurations(c *cli.Context, flags []cli.Flag) error {
	for _, f := range flags {
		if d, ok := f.(*cli.DurationFlag); ok && c.IsSet(d.Name) && c.Duration(d.Name) <= 0 {
			return fmt.Errorf("--%s %s: allowed is a duration above 0, like %s", d.Name, c.Duration(d.Name), d.Value)
		}
	}
	return nil
}

// globalString is a global flag's value: where it was set nearest to the
// command (after it, before it), else its default.
func globalString(c *cli.Context, name string) string {
	return globalContext(c, name).String(name)
}

// globalBool is a global bool flag's value, as globalString.
func globalBool(c *cli.Context, name string) bool {
	return globalContext(c, name).Bool(name)
}

// globalContext is the context of c's lineage nearest to the command
// where the global flag name was set, else c (its default).
func globalContext(c *cli.Context, name string) *cli.Context {
	for _, x := range c.Lineage() {
		if x.Command == nil && x.App == nil {
			continue
		}
		for _, set := range x.LocalFlagNames() {
			if set == name {
				return x
			}
		}
	}
	return c
}

// globalIsSet says whether a global flag was given anywhere (or by its
// environment variable).
func globalIsSet(c *cli.Context, name string) bool {
	for _, x := range c.Lineage() {
		if x.IsSet(name) {
			return true
		}
	}
	return false
}

// exitError carries an exit status with an optional message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }
func (e exitError) ExitCode() int { return e.code }

// commandPath is the command's name below the app's: "config check".
func commandPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && (c.App == nil || x.Command.Name != c.App.Name) {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}
