package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
)

// The generated files are the commands' output: what `make generate`
// writes and `make check-generated` compares.
func TestConfigGeneratedFilesAreCurrent(t *testing.T) {
	for _, tt := range []struct {
		args []string
		file string
	}{
		{[]string{"config", "reference"}, filepath.Join("..", "..", "docs", "config-reference.md")},
		{[]string{"config", "init", "--generic"}, filepath.Join("..", "..", "packaging", "config.toml")},
	} {
		out, err := runDiscover(t, tt.args...)
		require.NoError(t, err)
		want, err := os.ReadFile(tt.file)
		require.NoError(t, err)
		assert.Equal(t, string(want), out, "%s is stale: run `make generate`", tt.file)
	}
}

// The packaged config passes `config check` on real machines: as shipped
// it is the defaults.
func TestPackagedConfigChecks(t *testing.T) {
	conf := filepath.Join("..", "..", "packaging", "config.toml")
	for _, fixture := range []string{"hwloc-32amd64-4s2n4c-cgroup2", "ocp-bm-worker1"} {
		out, err := runDiscover(t, "--sysfs", fixtureSys(fixture), "--config", conf, "config", "check", "--hostname", "worker1")
		require.NoError(t, err, "%s: %s", fixture, out)
		assert.Empty(t, out)
	}
}

func TestConfigInitGenericRefusesHostname(t *testing.T) {
	app := newApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	app.ExitErrHandler = func(*cli.Context, error) {} // return the error instead of exiting
	err := app.Run([]string{"numa-partition", "config", "init", "--generic", "--hostname", "x"})
	var coder cli.ExitCoder
	require.ErrorAs(t, err, &coder)
	assert.Equal(t, 2, coder.ExitCode())
	assert.Contains(t, err.Error(), "--generic")
}
