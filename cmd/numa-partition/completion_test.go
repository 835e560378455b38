package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// complete runs the app as the shell's completion does: the words up to
// the cursor, then --generate-bash-completion.
func complete(t *testing.T, words ...string) []string {
	t.Helper()
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &bytes.Buffer{}
	args := append(append([]string{"numa-partition"}, words...), "--generate-bash-completion")
	require.NoError(t, runArgs(context.Background(), app, args))
	return strings.Fields(out.String())
}

func TestCompleteFlagValues(t *testing.T) {
	plan := []string{"--sysfs", fixtureSys("hwloc-32amd64-4s2n4c-cgroup2"), "--config", "../../examples/4socket/config.toml"}
	assert.Equal(t, []string{"node0", "node2", "node4", "lowlat"}, complete(t, append([]string{"allocations"}, append(plan, "--partition")...)...),
		"the plan's partitions after --partition")
	assert.Equal(t, []string{"node0", "node2", "node4", "lowlat"}, complete(t, append([]string{"admit"}, append(plan, "-p")...)...),
		"and after its alias")
	assert.Equal(t, []string{"table", "json", "yaml", "svg", "dot"}, complete(t, "plan", "-o"), "plan also draws")
	assert.Equal(t, []string{"table", "json", "yaml"}, complete(t, "status", "--output"))
	assert.Equal(t, []string{"debug", "info", "warn", "error"}, complete(t, "apply", "--log-level"))
	assert.Empty(t, complete(t, "plan", "--config"), "a file: left to the shell")
	assert.NotContains(t, complete(t, "plan", "--o"), "json", "a partial flag is completed as a flag, not as its value")
	assert.Empty(t, complete(t, "allocations", "--config", "/nonexistent.toml", "--partition"), "no plan, no names (and no error)")
}
