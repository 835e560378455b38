package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runLine runs a whole command line as main does.
func runLine(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &out
	err := runArgs(context.Background(), app, append([]string{"numa-partition"}, args...))
	return out.String(), err
}

// Repro (#26): flags after an argument were refused (`simulate FILE -o
// json`) or the argument was silently dropped (`discover DUMP` read the
// live /sys and exited 0); `-ojson` was refused.
func TestFlagsAnywhereOnTheLine(t *testing.T) {
	dump := fixtureSys("qemu-2node-v2")
	for _, line := range [][]string{
		{"discover", "--sysfs", dump, "-o", "json"},
		{"discover", "--sysfs", dump, "-ojson"},
		{"discover", "-o=json", "--sysfs", dump},
		{"--log-level", "error", "discover", "--sysfs=" + dump, "--output", "json"},
		{"simulate", "../../examples/simulate/two-socket.yaml", "-o", "json"},
		{"simulate", "-o", "json", "--", "../../examples/simulate/two-socket.yaml"},
	} {
		out, err := runLine(t, line...)
		require.NoError(t, err, "%q", line)
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &v), "%q printed no JSON object:\n%s", line, out)
	}

	_, err := runLine(t, "discover", dump, "-o", "json")
	require.Error(t, err, "an argument to a command that takes none")
	assert.Contains(t, err.Error(), dump)
	assert.Contains(t, err.Error(), "takes no arguments")
}

func TestInterspersedOrder(t *testing.T) {
	app := newApp()
	for _, tc := range []struct{ in, want []string }{
		{[]string{"np", "simulate", "F", "-o", "json"}, []string{"np", "simulate", "-o", "json", "--", "F"}},
		{[]string{"np", "--log-level", "debug", "release", "UID", "--partition", "node0"}, []string{"np", "--log-level", "debug", "release", "--partition", "node0", "--", "UID"}},
		{[]string{"np", "simulate", "-", "-ojson"}, []string{"np", "simulate", "-o", "json", "--", "-"}},
		{[]string{"np", "release", "--", "-odd-uid"}, []string{"np", "release", "--", "-odd-uid"}},
		{[]string{"np", "config", "init", "--hostname", "h1"}, []string{"np", "config", "init", "--hostname", "h1"}},
		{[]string{"np", "apply", "--no-such-flag", "x"}, []string{"np", "apply", "--no-such-flag", "--", "x"}},
		// Shell completion's line keeps the word before the cursor last.
		{[]string{"np", "status", "--output", "--generate-bash-completion"}, []string{"np", "status", "--output", "--generate-bash-completion"}},
	} {
		assert.Equal(t, tc.want, interspersed(app, tc.in), "%q", tc.in)
	}
}

// --max-unavailable sizes apply --drain's waves: refused without --drain,
// and below 1, before anything is read or asked.
func TestMaxUnavailableFlag(t *testing.T) {
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"apply", "--max-unavailable", "2"}, "--max-unavailable: allowed only with --drain"},
		{[]string{"apply", "--drain", "--max-unavailable", "0"}, "--max-unavailable 0: allowed is 1 or more"},
	} {
		_, err := runLine(t, tc.line...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.line, err, tc.want)
		}
	}
}
