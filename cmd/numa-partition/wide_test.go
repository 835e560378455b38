package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
	"github.com/numa-partition/numa-partition/slices/nodeview"
)

// prose are the lines no width budget holds: warnings and notes are
// sentences, which a terminal wraps as well as we would, and which
// scripts and people grep whole.
var prose = regexp.MustCompile(`^  - |'s capacity is the whole machine's: `)

// assertFits fails on every line of out, not prose, wider than the
// default tables' budget.
func assertFits(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > output.Width && !prose.MatchString(line) {
			t.Errorf("%s: a line of %d columns, over %d (move a column to -o wide, or wrap it):\n%s", what, n, output.Width, line)
		}
	}
}

// maxWidth is out's widest line.
func maxWidth(out string) int {
	w := 0
	for _, line := range strings.Split(out, "\n") {
		w = max(w, utf8.RuneCountInString(line))
	}
	return w
}

// The default discover and plan fit output.Width on every dump in
// testdata (plan with the default config and the seed example's facts,
// so that it does not read this machine), and every example's plan.txt
// (the default plan, byte for byte, as TestExamples* check). -o wide is
// at least as wide: it prints what does not fit.
func TestDefaultTablesFitTheWidth(t *testing.T) {
	dumps, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sysfs", "*", "sys"))
	require.NoError(t, err)
	require.Greater(t, len(dumps), 20)
	facts := filepath.Join("..", "..", "examples", "seed-2socket", "facts.json")
	conf := filepath.Join("..", "..", "packaging", "config.toml")
	widest := map[string]int{}
	measured := 0
	for _, sys := range dumps {
		name := filepath.Base(filepath.Dir(sys))
		for cmd, args := range map[string][]string{
			"discover": {"--sysfs", sys, "discover"},
			"plan":     {"--sysfs", sys, "--config", conf, "plan", "--host-facts", facts},
		} {
			def, err := runDiscover(t, args...)
			if cmd == "plan" && err != nil && strings.Contains(err.Error(), "problems in the config") {
				continue // a dump too small for the default config's reservations
			}
			require.NoError(t, err, "%s %s: %s", cmd, name, def)
			measured++
			assertFits(t, cmd+" on "+name, def)
			wide, err := runDiscover(t, append(args, "-o", "wide")...)
			require.NoError(t, err, "%s -o wide %s: %s", cmd, name, wide)
			assert.GreaterOrEqual(t, maxWidth(wide), maxWidth(def), "%s on %s", cmd, name)
			widest[cmd] = max(widest[cmd], maxWidth(wide))
		}
	}
	require.Greater(t, measured, 2*len(dumps)-5, "too few dumps planned")
	// The budget bites: some dump's wide output does not fit it.
	assert.Greater(t, widest["discover"], output.Width)
	assert.Greater(t, widest["plan"], output.Width)

	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "plan.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	for _, file := range examples {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assertFits(t, file, string(data))
	}
}

// headers are the table header lines of out (one word or more in
// capitals, two spaces apart), each split into its columns.
func headers(out string) [][]string {
	var hs [][]string
	for _, line := range strings.Split(out, "\n") {
		if regexp.MustCompile(`^[A-Z][A-Z /]+(  +[A-Z][A-Z /()]+)+$`).MatchString(line) {
			hs = append(hs, regexp.MustCompile(`  +`).Split(strings.TrimSpace(line), -1))
		}
	}
	return hs
}

// assertWideHasTheColumns: every table of def is in wide, in the same
// order, with at least its columns in their order, and wide has more.
func assertWideHasTheColumns(t *testing.T, what, def, wide string) {
	t.Helper()
	dh, wh := headers(def), headers(wide)
	require.NotEmpty(t, dh, "%s: no table header in\n%s", what, def)
	require.Len(t, wh, len(dh), "%s: the tables of -o wide", what)
	more := false
	for i := range dh {
		j := 0
		for _, col := range wh[i] {
			if j < len(dh[i]) && col == dh[i][j] {
				j++
			}
		}
		assert.Equal(t, len(dh[i]), j, "%s: -o wide's columns %v do not hold the default's %v in order", what, wh[i], dh[i])
		more = more || len(wh[i]) > len(dh[i])
	}
	assert.True(t, more, "%s: -o wide adds no column", what)
}

func TestWideHasTheDefaultColumns(t *testing.T) {
	args := []string{"--sysfs", fixtureSys("ocp-bm-master"), "--config", filepath.Join("..", "..", "packaging", "config.toml"),
		"plan", "--host-facts", filepath.Join("..", "..", "examples", "seed-2socket", "facts.json")}
	def, err := runDiscover(t, args...)
	require.NoError(t, err, def)
	wide, err := runDiscover(t, append(args, "-o", "wide")...)
	require.NoError(t, err, wide)
	assertWideHasTheColumns(t, "plan", def, wide)
	// The CPU list cut in the default table is whole in -o wide.
	assert.Contains(t, def, "  2,4,6,8,10 + 49 more...  ")
	assert.Contains(t, wide, "2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,58,60,")

	st := statusWithNodes()
	st.Partitions[0].Usage = &nodeview.Usage{CPUNanoseconds: 12_340_000_000, MemoryWorkingSetBytes: 512 << 20}
	var d, w bytes.Buffer
	require.NoError(t, writeStatus(&d, st, output.Width))
	require.NoError(t, writeStatus(&w, st, 0))
	assertWideHasTheColumns(t, "status", d.String(), w.String())
	assert.NotContains(t, d.String(), "12.3s", "CPU TIME is -o wide's")
	assert.Contains(t, w.String(), "12.3s")

	lists := []daemonapi.AllocationsResponse{{Partition: "node0", Allocations: []allocator.Allocation{{Pod: "default/a", PodUID: "0b7e2f4c-6a51-4d9e-9f0a-3c1d2e4f5a6b",
		Admitted: true, Pinned: true, Containers: []allocator.ContainerDecision{{Name: "c"}}}}}}
	d.Reset()
	w.Reset()
	require.NoError(t, writeAllocations(&d, &w, lists, output.Width))
	def = d.String()
	d.Reset()
	require.NoError(t, writeAllocations(&d, &w, lists, 0))
	assertWideHasTheColumns(t, "allocations", def, d.String())
	assert.NotContains(t, def, "0b7e2f4c", "UID is -o wide's")
	assert.Contains(t, d.String(), "0b7e2f4c")
}
