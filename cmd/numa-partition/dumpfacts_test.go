package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
)

// runStderr runs the app as main does, at the default log level, and
// returns what it logged on standard error (where setupLogging sends
// the logs).
func runStderr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	oldErr, oldLog := os.Stderr, slog.Default()
	os.Stderr = f
	defer func() { os.Stderr = oldErr; slog.SetDefault(oldLog) }()
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*cli.Context, error) {}
	runErr := app.Run(append([]string{"numa-partition"}, args...))
	logged, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	return string(logged), runErr
}

const dumpWarning = "planning another machine's sysfs with this machine's host facts"

// #40: a plan of a sysfs dump without --host-facts says, on standard
// error and once, which facts are this machine's and how to give the
// dump's; with --host-facts, or of the live /sys, it does not.
func TestPlanOfADumpWarnsOfThisMachinesFacts(t *testing.T) {
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg}

	logged, err := runStderr(t, append(base, "plan")...)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(logged, dumpWarning), "%s", logged)
	host, err := os.Hostname()
	require.NoError(t, err)
	for _, want := range []string{"level=WARN", "host name (" + host + ")", "pid limit", "filesystems (/ and the kubelet root dirs)",
		"network interfaces and cgroup mode are this machine's", "discover --host-facts-out FILE", "--host-facts FILE", "sysfs=" + fixtureSys("qemu-2node-v2")} {
		assert.Contains(t, logged, want)
	}

	// Facts the command line gives are not this machine's.
	logged, err = runStderr(t, append(base, "plan", "--hostname", "h", "--cgroup-mode", "unified")...)
	require.NoError(t, err)
	assert.Contains(t, logged, "the plan's pid limit, filesystems (/ and the kubelet root dirs) and network interfaces are this machine's")
	assert.NotContains(t, logged, "host name")
	assert.NotContains(t, logged, "cgroup mode")

	// render takes the same path, and warns once too.
	logged, err = runStderr(t, append(base, "render", "--hostname", "h", "--out", t.TempDir())...)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(logged, dumpWarning), "%s", logged)

	// The dump's facts given: nothing to warn of.
	facts := filepath.Join(t.TempDir(), "facts.json")
	_, err = runCLI(append(base, "discover", "--host-facts-out", facts)...)
	require.NoError(t, err)
	logged, err = runStderr(t, append(base, "plan", "--hostname", "h", "--host-facts", facts)...)
	require.NoError(t, err)
	assert.NotContains(t, logged, dumpWarning)

	// --log-level error leaves it out, as every warning.
	logged, err = runStderr(t, append(base, "--log-level", "error", "plan")...)
	require.NoError(t, err)
	assert.NotContains(t, logged, dumpWarning)
}

func TestIsLiveSysfs(t *testing.T) {
	assert.True(t, isLiveSysfs("/sys"))
	assert.True(t, isLiveSysfs("/sys/"))
	assert.True(t, isLiveSysfs("/sys/../sys"))
	if _, err := os.Stat("/sys"); err == nil {
		link := filepath.Join(t.TempDir(), "sys")
		require.NoError(t, os.Symlink("/sys", link))
		assert.True(t, isLiveSysfs(link), "a path to /sys is /sys")
	}
	assert.False(t, isLiveSysfs(fixtureSys("qemu-2node-v2")))
	assert.True(t, isLiveSysfs(filepath.Join(t.TempDir(), "missing")), "discovery says what is wrong with a missing dir")
}
