package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logEveryLevel logs one line at each level, through a logger With an
// attribute and a group (the daemons' loggers are).
func logEveryLevel(h slog.Handler) {
	l := slog.New(h).With("partition", "node0").WithGroup("g")
	l.Debug("d", "k", 1)
	l.Info("i", "k", 2)
	l.Warn("w", "k", 3)
	l.Error("e\nsecond line", "k", 4)
}

// Under journald every line starts with its sd-daemon priority, and
// carries no time (journald stamps it); without it, no prefix and the
// time. Both formats.
func TestLogJournalPriorities(t *testing.T) {
	for _, format := range []string{logFormatText, logFormatJSON} {
		for _, journal := range []bool{true, false} {
			var b bytes.Buffer
			h, err := newLogHandler(&b, format, slog.LevelDebug, journal)
			require.NoError(t, err)
			logEveryLevel(h)
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			require.Len(t, lines, 4, "%s journal %v: one line a record, a message's newline escaped:\n%s", format, journal, b.String())
			for i, prefix := range []string{"<7>", "<6>", "<4>", "<3>"} {
				if journal {
					assert.True(t, strings.HasPrefix(lines[i], prefix), "%s: %q wants %s", format, lines[i], prefix)
					assert.NotContains(t, lines[i], "time=")
					assert.NotContains(t, lines[i], `"time":`)
				} else {
					assert.False(t, strings.HasPrefix(lines[i], "<"), "%s: %q has a priority outside journald", format, lines[i])
					assert.Regexp(t, `time=|"time":`, lines[i])
				}
			}
		}
	}
}

// --log-format json: every line is a JSON object with level and msg.
func TestLogFormatJSONLinesParse(t *testing.T) {
	var b bytes.Buffer
	h, err := newLogHandler(&b, logFormatJSON, slog.LevelDebug, false)
	require.NoError(t, err)
	logEveryLevel(h)
	levels := []string{"DEBUG", "INFO", "WARN", "ERROR"}
	for i, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		assert.Equal(t, levels[i], rec["level"], line)
		assert.NotEmpty(t, rec["msg"], line)
		assert.Equal(t, "node0", rec["partition"], line)
	}
	_, err = newLogHandler(&b, "logfmt", slog.LevelInfo, false)
	assert.EqualError(t, err, `--log-format "logfmt": allowed are text, json`)
}

// The flag, before or after the command, sets the one logger every
// command and daemon logs through (slog's default).
func TestLogFormatFlag(t *testing.T) {
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	for _, line := range [][]string{{"--log-format", "json", "version"}, {"version", "--log-format", "json"}} {
		_, err := runRaw(line...)
		require.NoError(t, err, "%q", line)
		_, isJSON := slog.Default().Handler().(*slog.JSONHandler)
		_, inJournal := slog.Default().Handler().(journalHandler)
		assert.True(t, isJSON || inJournal, "%q: %T", line, slog.Default().Handler())
	}
	_, err := runRaw("version", "--log-format", "xml")
	assert.ErrorContains(t, err, `--log-format "xml": allowed are text, json`)
}

// -o jsonpath= and jsonpath-file= print the template evaluated on the
// object -o json prints; a bad template is refused before any work.
func TestOutputJSONPath(t *testing.T) {
	sys := fixtureSys("hwloc-nvidiagpunumanodes")
	js, err := runDiscover(t, "--sysfs", sys, "discover", "-o", "json")
	require.NoError(t, err)
	var topo struct {
		Kind  string `json:"kind"`
		Nodes []struct {
			ID int `json:"id"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &topo))
	var ids []string
	for _, n := range topo.Nodes {
		ids = append(ids, strconv.Itoa(n.ID))
	}
	got, err := runDiscover(t, "--sysfs", sys, "discover", "-o", "jsonpath={.kind}: {.nodes[*].id}")
	require.NoError(t, err, got)
	assert.Equal(t, topo.Kind+": "+strings.Join(ids, " "), got)

	file := filepath.Join(t.TempDir(), "t.jsonpath")
	require.NoError(t, os.WriteFile(file, []byte("{range .nodes[*]}{.id}{\"\\n\"}{end}"), 0o644))
	got, err = runDiscover(t, "--sysfs", sys, "-o", "jsonpath-file="+file, "discover")
	require.NoError(t, err, got)
	assert.Equal(t, strings.Join(ids, "\n")+"\n", got)

	_, err = runDiscover(t, "--sysfs", sys, "discover", "-o", "jsonpath={.kind} {.nodes[")
	assert.ErrorContains(t, err, "--output jsonpath={.kind} {.nodes[: at column 9: ")
	_, err = runDiscover(t, "--sysfs", sys, "discover", "-o", "jsonpath-file=/nonexistent/t")
	assert.ErrorContains(t, err, "--output jsonpath-file=/nonexistent/t: ")
}

// JOURNAL_STREAM counts only for the file it names: a process that
// inherited it but writes its standard error elsewhere prefixes nothing.
func TestIsJournalComparesDeviceAndInode(t *testing.T) {
	dir := t.TempDir()
	open := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	journal, other := open("journal"), open("other")
	fi, err := journal.Stat()
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	stream := fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	assert.True(t, isJournal(stream, journal))
	assert.False(t, isJournal(stream, other), "stderr redirected elsewhere")
	assert.False(t, isJournal("", journal))
	assert.False(t, isJournal("garbage", journal))
	var b bytes.Buffer
	assert.Empty(t, journalPrefix(&b, 4), "a buffer is never the journal")
}
