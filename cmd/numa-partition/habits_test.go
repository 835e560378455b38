package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// runMain runs a command line as main does: standard output and standard
// error apart, the error printed as main prints it, and the exit status.
func runMain(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errOut
	err := runArgs(context.Background(), app, append([]string{"numa-partition"}, args...))
	code = exitStatus(err, &errOut)
	return out.String(), errOut.String(), code
}

// Issue 40: `help CMD` printed "No help topic for 'help'" and exited 3;
// as in git and kubectl it is CMD's help, exit 0, and so is
// `help CMD SUBCMD`. A topic that is no command exits 3, naming it.
func TestHelpCommand_Issue40(t *testing.T) {
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"help", "apply"}, "numa-partition apply - partition the host"},
		{[]string{"help", "config", "init"}, "numa-partition config init - print a commented config"},
		{[]string{"--log-level", "error", "help", "status"}, "numa-partition status - show the partitions' units"},
		{[]string{"help"}, "numa-partition - turn one multi-socket host"},
		{[]string{"config", "help", "init"}, "numa-partition config init - print a commented config"},
	} {
		stdout, stderr, code := runMain(tc.line...)
		assert.Equal(t, 0, code, "%q: %s", tc.line, stderr)
		assert.Contains(t, stdout, tc.want, "%q", tc.line)
	}
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"help", "nosuch"}, "numa-partition: unknown command \"nosuch\" for \"numa-partition\"\nSee 'numa-partition --help' for usage.\n"},
		{[]string{"help", "config", "nosuch"}, "numa-partition: unknown command \"nosuch\" for \"numa-partition config\"\nSee 'numa-partition config --help' for usage.\n"},
		{[]string{"nosuch"}, "numa-partition: unknown command \"nosuch\" for \"numa-partition\"\nSee 'numa-partition --help' for usage.\n"},
		{[]string{"config", "nosuch"}, "numa-partition: unknown command \"nosuch\" for \"numa-partition config\"\nSee 'numa-partition config --help' for usage.\n"},
	} {
		stdout, stderr, code := runMain(tc.line...)
		assert.Equal(t, 3, code, "%q", tc.line)
		assert.Empty(t, stdout, "%q", tc.line)
		assert.Equal(t, tc.want, stderr, "%q", tc.line)
	}
}

// Issue 40: an unknown flag printed the whole help on standard output;
// it is one line naming the flag as typed and where the usage is, on
// standard error, exit 2 (bad flags, as every other usage error).
func TestUsageErrorIsOneLine_Issue40(t *testing.T) {
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"apply", "--nosuch"}, "numa-partition: unknown flag --nosuch\nSee 'numa-partition apply --help' for usage.\n"},
		{[]string{"--nosuch", "status"}, "numa-partition: unknown flag --nosuch\nSee 'numa-partition --help' for usage.\n"},
		{[]string{"config", "init", "-x"}, "numa-partition: unknown flag -x\nSee 'numa-partition config init --help' for usage.\n"},
		{[]string{"status", "--probe-timeout", "soon"}, "numa-partition: invalid value \"soon\" for flag --probe-timeout: parse error\nSee 'numa-partition status --help' for usage.\n"},
		{[]string{"config", "init", "-o"}, "numa-partition: flag needs an argument: -o\nSee 'numa-partition config init --help' for usage.\n"},
	} {
		stdout, stderr, code := runMain(tc.line...)
		assert.Equal(t, 2, code, "%q", tc.line)
		assert.Empty(t, stdout, "%q", tc.line)
		assert.Equal(t, tc.want, stderr, "%q", tc.line)
	}
}
