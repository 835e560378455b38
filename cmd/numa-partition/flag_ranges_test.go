package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 38 item 8: -o "", --job-timeout -1s and --probe-timeout 0 were
// accepted (the table, a job that times out at once, a probe that never
// does). Each is refused before the command runs, in one line naming
// the flag and what is allowed; the flag errors exit 2 (exitStatus).
func TestFlagsOutOfRangeAreRefused_Issue38Item8(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "", "discover"}, `--output "": allowed are table, wide, json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE (plan: also svg, dot)`},
		{[]string{"discover", "--output="}, `--output "": allowed are table, wide, json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE (plan: also svg, dot)`},
		{[]string{"apply", "--dry-run", "--job-timeout", "-1s"}, `--job-timeout -1s: allowed is a duration above 0, like 1m30s`},
		{[]string{"status", "--probe-timeout", "0"}, `--probe-timeout 0s: allowed is a duration above 0, like 2s`},
		{[]string{"allocations", "--timeout", "0s"}, `--timeout 0s: allowed is a duration above 0, like 30s`},
	} {
		_, err := runDiscover(t, c.args...)
		require.Error(t, err, c.args)
		assert.Equal(t, c.want, err.Error(), c.args)
	}
}
