package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed rewrites a command line typed the way kubectl and most
// CLIs take it into the order urfave/cli v2 parses: each command's flags
// before its arguments. v2 stops parsing flags at the first argument, so
// `simulate FILE -o json` refused -o and `discover DUMP --sysfs X` ran
// with DUMP ignored. Also `-ojson` (a one-letter flag with its value
// attached) becomes `-o json`. A flag's value is taken from the next
// word when the flag takes one and has no "="; "--" ends the flags, as
// everywhere. A word that is no flag of the command is left for the
// parser to refuse by name. Shell completion's own command lines are
// left alone: the word before the cursor must stay last.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return args
	}
	out := []string{args[0]}
	flags, cmds := app.Flags, app.Commands
	var pendingFlags, positional []string
	rest := args[1:]
	for len(rest) > 0 {
		w := rest[0]
		rest = rest[1:]
		switch {
		case w == "--":
			positional = append(positional, rest...)
			rest = nil
		case w == "-" || !strings.HasPrefix(w, "-"):
			if cmd := commandNamed(cmds, w); cmd != nil && len(positional) == 0 {
				out = append(append(out, pendingFlags...), w)
				pendingFlags = nil
				flags, cmds = cmd.Flags, cmd.Subcommands
				continue
			}
			positional = append(positional, w)
		default:
			name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			f := flagByName(flags, name)
			if f == nil && !strings.HasPrefix(w, "--") && len(name) > 1 && !hasValue {
				// -ojson: -o with its value attached.
				if short := flagByName(flags, name[:1]); short != nil && takesValue(short) {
					pendingFlags = append(pendingFlags, "-"+name[:1], name[1:])
					continue
				}
			}
			pendingFlags = append(pendingFlags, w)
			if f != nil && takesValue(f) && !hasValue && len(rest) > 0 {
				pendingFlags = append(pendingFlags, rest[0])
				rest = rest[1:]
			}
		}
	}
	out = append(out, pendingFlags...)
	if len(positional) > 0 {
		out = append(append(out, "--"), positional...)
	}
	return out
}

func commandNamed(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func flagByName(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// takesValue says whether a flag reads a value (every flag type but
// bool does).
func takesValue(f cli.Flag) bool {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	return true
}

// refuseStrayArgs makes every command that takes no arguments (no
// ArgsUsage) refuse one, naming it: `discover DUMP` read the live /sys
// and exited 0, where the user meant `discover --sysfs DUMP`.
func refuseStrayArgs(cmds []*cli.Command) []*cli.Command {
	for _, cmd := range cmds {
		refuseStrayArgs(cmd.Subcommands)
		if cmd.ArgsUsage != "" || cmd.Action == nil {
			continue
		}
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("%s takes no arguments, got %q: a value belongs after its flag (--sysfs DIR, --config FILE, -o json)", c.Command.HelpName, c.Args().Slice())
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
	}
	return cmds
}
