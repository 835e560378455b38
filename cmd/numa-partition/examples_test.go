package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite examples/*/plan.{txt,json,svg,dot} of the examples with a sysfs dump")

// Every example with a sysfs dump (its sysfs file names it) is what the
// CLI prints from the dump, its config and its host facts (facts.json),
// byte for byte: make demo prints plan.txt, and an operator's plan made
// off the target from a dump and discover --host-facts-out is the
// target's own.
func TestExamplesFromDumpAndFacts(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "sysfs"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, sysfsFile := range dirs {
		dir := filepath.Dir(sysfsFile)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			fixture, err := os.ReadFile(sysfsFile)
			require.NoError(t, err)
			args := []string{"--sysfs", fixtureSys(strings.TrimSpace(string(fixture))), "--config", filepath.Join(dir, "config.toml"),
				"plan", "--host-facts", filepath.Join(dir, "facts.json")}
			for file, output := range map[string]string{"plan.txt": "table", "plan.json": "json", "plan.svg": "svg", "plan.dot": "dot"} {
				got, err := runDiscover(t, append(args, "-o", output)...)
				require.NoError(t, err, got)
				path := filepath.Join(dir, file)
				if *update {
					require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
					continue
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "go test ./cmd/numa-partition -run TestExamplesFromDumpAndFacts -update")
				assert.Equal(t, string(want), got, "%s is stale: go test ./cmd/numa-partition -run TestExamplesFromDumpAndFacts -update", path)
			}
		})
	}
}

// discover --host-facts-out on this host, then plan --host-facts with
// the same dump and config: this host's own plan, byte for byte, JSON
// and TOML. The host name comes from the file, not from the machine that
// plans, when the config has none.
func TestHostFactsOutReproducesThisHostsPlan(t *testing.T) {
	sys := fixtureSys("hwloc-32amd64-4s2n4c-cgroup2")
	conf := filepath.Join("..", "..", "packaging", "config.toml") // no kubelet.hostname
	live, err := runDiscover(t, "--sysfs", sys, "--config", conf, "plan", "-o", "json")
	require.NoError(t, err, live)
	for _, name := range []string{"facts.json", "facts.toml"} {
		file := filepath.Join(t.TempDir(), name)
		out, err := runDiscover(t, "--sysfs", sys, "--config", conf, "discover", "--host-facts-out", file)
		require.NoError(t, err, out)
		offline, err := runDiscover(t, "--sysfs", sys, "--config", conf, "plan", "-o", "json", "--host-facts", file)
		require.NoError(t, err, offline)
		assert.Equal(t, live, offline, name)

		// Another host name in the file is the plan's.
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		host, err := os.Hostname()
		require.NoError(t, err)
		data = []byte(strings.Replace(string(data), `"`+host+`"`, `"elsewhere"`, 1))
		require.NoError(t, os.WriteFile(file, data, 0o644))
		offline, err = runDiscover(t, "--sysfs", sys, "--config", conf, "plan", "-o", "json", "--host-facts", file)
		require.NoError(t, err, offline)
		assert.Contains(t, offline, `"hostname": "elsewhere"`, name)
	}
}
