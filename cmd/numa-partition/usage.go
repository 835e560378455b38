package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// usageError is the app's and every command's OnUsageError: a flag the
// command does not have, or one missing its value, is one line naming it
// and a line saying where the usage is, as kubectl and git say it. main
// prints it on standard error and exits 2, as for any other bad flag.
// urfave/cli's own printed "Incorrect Usage" and the whole help on
// standard output, where a script's pipe took it for the command's output.
func usageError(c *cli.Context, err error, _ bool) error {
	msg := goFlagName.ReplaceAllStringFunc(err.Error(), func(m string) string {
		at := strings.Index(m, "-") // the prefixes have none
		return m[:at] + dashed(m[at+1:])
	})
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		msg = "unknown flag " + name
	}
	if raw := err.Error(); strings.HasSuffix(raw, ": -v") || strings.Contains(raw, " for flag -v: ") {
		// Until -v was the verbosity it was the version: say so to the
		// hands that still type it.
		msg += " (-v N is the log verbosity, as kubectl's; the version is --version)"
	}
	return fmt.Errorf("%s\n%s", msg, seeHelp(c))
}

// goFlagName is a flag's name in the errors of Go's flag package
// ("flag needs an argument: -output", "invalid value "x" for flag
// -timeout"), which names every flag with one dash: a long one is typed
// with two.
var goFlagName = regexp.MustCompile(`(: |for flag |for )-[A-Za-z0-9][A-Za-z0-9-]*`)

// seeHelp is the hint under a usage error: the command's own help.
func seeHelp(c *cli.Context) string { return seeHelpOf(helpName(c)) }

func seeHelpOf(name string) string { return fmt.Sprintf("See '%s --help' for usage.", name) }

// helpName is the command's name as typed: "numa-partition config init".
func helpName(c *cli.Context) string {
	if c.Command != nil && c.Command.HelpName != "" {
		return c.Command.HelpName
	}
	return c.App.Name
}

// dashed is a flag's name as it is typed: -o, --output.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// withUsageErrors gives every command usageError (urfave/cli does not
// pass the app's down), and each command that only groups others
// (config, network) groupAction. It runs after refuseStrayArgs, which
// leaves the commands without an action alone.
func withUsageErrors(cmds []*cli.Command) []*cli.Command {
	giveUsageErrors(cmds, requiredFlags{})
	return cmds
}

// requiredFlags are the flags found required so far. Commands may share a
// flag (network's subcommands share one set), and requireInBefore clears
// Required on the flag it moves: the set keeps it required for every
// command that has it, not only the first one met.
type requiredFlags map[*cli.StringFlag]bool

func giveUsageErrors(cmds []*cli.Command, required requiredFlags) {
	for _, cmd := range cmds {
		cmd.OnUsageError = usageError
		if cmd.Action == nil && len(cmd.Subcommands) > 0 {
			cmd.Action = groupAction
		}
		requireInBefore(cmd, required)
		giveUsageErrors(cmd.Subcommands, required)
	}
}

// requireInBefore moves the check of cmd's required flags from urfave/cli,
// which printed the whole help on standard output before its error, into
// cmd's Before, as a usage error like a bad flag's.
func requireInBefore(cmd *cli.Command, seen requiredFlags) {
	var required []string
	for _, f := range cmd.Flags {
		if s, ok := f.(*cli.StringFlag); ok && (s.Required || seen[s]) {
			seen[s] = true
			s.Required = false
			required = append(required, s.Name)
		}
	}
	if len(required) == 0 {
		return
	}
	before := cmd.Before
	cmd.Before = func(c *cli.Context) error {
		var missing []string
		for _, name := range required {
			if !c.IsSet(name) {
				missing = append(missing, dashed(name))
			}
		}
		switch len(missing) {
		case 0:
		case 1:
			return fmt.Errorf("flag %s is required\n%s", missing[0], seeHelp(c))
		default:
			return fmt.Errorf("flags %s are required\n%s", strings.Join(missing, ", "), seeHelp(c))
		}
		if before != nil {
			return before(c)
		}
		return nil
	}
}

// appAction runs when no command is given: alone the app prints its
// help; a word that is no command exits 3, naming it, where urfave/cli's
// default said "No help topic for 'nosuch'".
func appAction(c *cli.Context) error {
	if c.Args().Present() {
		return unknownCommand(helpName(c), c.Args().First())
	}
	return cli.ShowAppHelp(c)
}

// groupAction is appAction for a command that groups others.
func groupAction(c *cli.Context) error {
	if c.Args().Present() {
		return unknownCommand(helpName(c), c.Args().First())
	}
	return cli.ShowSubcommandHelp(c)
}

// unknownCommand says that parent ("numa-partition config") has no
// command word, as kubectl says it; exit 3.
func unknownCommand(parent, word string) error {
	return exitError{code: 3, msg: fmt.Sprintf("unknown command %q for %q\n%s", word, parent, seeHelpOf(parent))}
}

// helpCommandLine rewrites `help CMD [SUB]`, git's and kubectl's way to
// ask for a command's help, into `CMD [SUB] --help`. The app hides
// urfave/cli's own help command (HideHelpCommand: it was listed as one of
// the tool's commands), and its default action then took "help" itself
// for the topic: `help apply` printed "No help topic for 'help'" and
// exited 3. A topic that is no command still exits 3, naming it. Shell
// completion's line (`help <TAB>`) completes the commands.
func helpCommandLine(app *cli.App, args []string) ([]string, error) {
	at := commandWord(app.Flags, args)
	if at < 0 || args[at] != "help" || commandNamed(app.Commands, "help") != nil {
		return args, nil
	}
	out := append(slices.Clone(args[:at]), args[at+1:]...)
	if out[len(out)-1] == "--generate-bash-completion" {
		return out, nil
	}
	parent, cmds := app.Name, app.Commands
	for _, w := range args[at+1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		cmd := commandNamed(cmds, w)
		if cmd == nil {
			return nil, unknownCommand(parent, w)
		}
		parent, cmds = parent+" "+cmd.Name, cmd.Subcommands
	}
	return append(out, "--help"), nil
}

// commandWord is the index in args (args[0] is the program) of the first
// word that is neither a flag of flags nor a flag's value: the command,
// as interspersed reads it; -1 when there is none.
func commandWord(flags []cli.Flag, args []string) int {
	for i := 1; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--":
			return -1
		case w == "-" || !strings.HasPrefix(w, "-"):
			return i
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if f := flagByName(flags, name); f != nil && takesValue(f) && !hasValue {
			i++ // its value
		}
	}
	return -1
}
