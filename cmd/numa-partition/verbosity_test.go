package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 26: -q logs errors only, and --log-level and -q count after the
// command too (--log-level after it was ignored: the app set the logger
// up before the command's flags were parsed).
func TestVerbosityFlags_Issue26(t *testing.T) {
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	ctx := context.Background()
	run := func(args ...string) error {
		_, err := runRaw(args...)
		return err
	}
	require.NoError(t, run("version"))
	assert.True(t, slog.Default().Enabled(ctx, slog.LevelInfo))

	for _, line := range [][]string{{"-q", "version"}, {"version", "-q"}, {"version", "--quiet"}, {"version", "--log-level", "error"}} {
		require.NoError(t, run(line...), "%q", line)
		assert.False(t, slog.Default().Enabled(ctx, slog.LevelWarn), "%q: warnings left out", line)
		assert.True(t, slog.Default().Enabled(ctx, slog.LevelError), "%q", line)
	}
	require.NoError(t, run("config", "reference", "--log-level", "debug"))
	assert.True(t, slog.Default().Enabled(ctx, slog.LevelDebug), "a subcommand's --log-level")

	assert.ErrorContains(t, run("version", "-q", "--log-level", "debug"), "--quiet and --log-level debug: choose one")
	assert.ErrorContains(t, run("version", "--log-level", "loud"), `--log-level "loud": allowed are debug, info, warn, error`)
}

// Every exit status the code uses is in the man page's EXIT STATUS, and
// nothing else is: the codes of exitError{code: N} in this package, 2
// (main's for any other error) and 3 (urfave/cli's unknown command).
func TestManListsEveryExitStatus(t *testing.T) {
	used := map[int]bool{0: true, 2: true, 3: true}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	code := regexp.MustCompile(`exitError\{code: (\d+)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range code.FindAllStringSubmatch(string(src), -1) {
			n, _ := strconv.Atoi(m[1])
			used[n] = true
		}
	}
	var listed []int
	for _, e := range exitStatuses {
		listed = append(listed, e.code)
	}
	var want []int
	for n := range used {
		want = append(want, n)
	}
	slices.Sort(want)
	assert.Equal(t, want, listed)

	page, err := runOut("man")
	require.NoError(t, err)
	assert.Contains(t, page, ".SH EXIT STATUS\n.TP\n.B 0\n")
	assert.Contains(t, page, ".TP\n.B 3\nAn unknown command")
	assert.Contains(t, page, ".SH LOGGING\n")
	assert.NotContains(t, page, "%!", "no formatting error")

	_, err = runOut("nosuch")
	var ec exitCoder
	require.ErrorAs(t, err, &ec)
	assert.Equal(t, 3, ec.ExitCode(), "an unknown command")
}
