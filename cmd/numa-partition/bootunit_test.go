package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/slices/bundle"
)

// #37: the boot applies the plan apply installed, never a config edited
// since. The unit passes the installed plan to apply --plan; that file, as
// render writes it, is a plan --plan takes, the same config plans it
// again, and an edited one is refused, naming the line.
func TestBootUnitAppliesTheInstalledPlanNotAnEditedConfig(t *testing.T) {
	unit := bootUnit()
	installed := "/" + bundle.PlanPath
	assert.Contains(t, unit, "\nExecStart=/usr/bin/numa-partition --config /etc/numa-partition/config.toml apply --plan "+installed+"\n")
	assert.Contains(t, unit, "\nConditionPathExists="+installed+"\n", "a host applied before plan.json was installed is skipped, not failed")

	cfg, err := os.ReadFile(filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml"))
	require.NoError(t, err)
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(conf, cfg, 0o644))
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--hostname", "h", "--config", conf}
	_, err = runCLI(append([]string{"render", "--out", filepath.Join(dir, "applied")}, base...)...)
	require.NoError(t, err)
	plan := filepath.Join(dir, "applied", bundle.PlanPath)

	_, err = runCLI(append([]string{"render", "--plan", plan, "--out", filepath.Join(dir, "again")}, base...)...)
	require.NoError(t, err, "the installed plan, with the config it was made from")

	require.NoError(t, os.WriteFile(conf, []byte(strings.Replace(string(cfg), "count = 24", "count = 25", 1)), 0o644))
	_, err = runCLI(append([]string{"render", "--plan", plan, "--out", filepath.Join(dir, "edited")}, base...)...)
	require.Error(t, err, "a config edited since the plan was installed")
	assert.Contains(t, err.Error(), "run plan again")
}
