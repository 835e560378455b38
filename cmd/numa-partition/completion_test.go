package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	assert.Equal(t, []string{"table", "wide", "json", "yaml", "jsonpath=", "jsonpath-file=", "svg", "dot"}, complete(t, "plan", "-o"), "plan also draws")
	assert.Equal(t, []string{"table", "wide", "json", "yaml", "jsonpath=", "jsonpath-file="}, complete(t, "status", "--output"))
	assert.Equal(t, []string{"debug", "info", "warn", "error"}, complete(t, "apply", "--log-level"))
	assert.Empty(t, complete(t, "plan", "--config"), "a file: left to the shell")
	assert.NotContains(t, complete(t, "plan", "--o"), "json", "a partial flag is completed as a flag, not as its value")
	assert.Empty(t, complete(t, "allocations", "--config", "/nonexistent.toml", "--partition"), "no plan, no names (and no error)")
}

// Issue 40: bash completion of `plan --<TAB>` offered nothing: the script
// passes the word being completed, and urfave/cli turned completion off
// for a line holding "--" (and ran plan with it); its default flag
// completion read os.Args rather than the line.
func TestCompleteFlags_Issue40(t *testing.T) {
	long := complete(t, "plan", "--")
	for _, f := range []string{"--output", "--config", "--host-facts", "--sysfs", "--log-level", "--help"} {
		assert.Contains(t, long, f, "plan --<TAB>")
	}
	assert.NotContains(t, long, "-o", "after -- only long flags")
	assert.NotContains(t, long, "--generate-bash-completion", "hidden")
	assert.Contains(t, complete(t, "plan", "-"), "-o", "after - the short ones too")
	assert.Equal(t, []string{"--output"}, complete(t, "plan", "--o"))
	assert.Equal(t, []string{"--host-facts", "--hostname"}, sorted(complete(t, "plan", "--ho")))
	assert.NotContains(t, complete(t, "plan", "-o", "json", "--"), "--output", "a flag given once is not offered again")
	assert.Contains(t, complete(t, "network", "up", "--device", "eth1", "--"), "--device", "a repeatable flag is")
	assert.Contains(t, complete(t, "--"), "--version", "the app's own flags")
	assert.Equal(t, []string{"table", "wide", "json", "yaml", "jsonpath=", "jsonpath-file="}, complete(t, "-o"), "the app's flags' values")

	top := complete(t)
	assert.Contains(t, top, "plan")
	assert.Contains(t, top, "help", "help CMD works, so it is offered")
	assert.NotContains(t, top, "man", "hidden")
	assert.NotContains(t, complete(t, "help"), "help")
	assert.Equal(t, []string{"init", "reference", "check"}, complete(t, "help", "config"))
	assert.Equal(t, []string{"init", "reference", "check"}, complete(t, "config"), "no help subcommand offered")
	assert.Empty(t, complete(t, "plan"), "no subcommand, no argument: the shell's own")
	assert.Equal(t, []string{"bash", "zsh", "fish"}, complete(t, "completion"))
	assert.Empty(t, complete(t, "simulate", "x", "--", "--"), "after -- only arguments (files)")
}

func sorted(s []string) []string { slices.Sort(s); return s }

// TestMain runs main itself when the bash test below calls this binary
// as numa-partition.
func TestMain(m *testing.M) {
	if os.Getenv("NUMA_PARTITION_TEST_RUN_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// Issue 40: what bash itself offers with the script `completion bash`
// prints (packaging/completions/numa-partition.bash), the binary being
// this test's.
func TestBashCompletionScript_Issue40(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(exe, filepath.Join(dir, "numa-partition")))
	script := filepath.Join(dir, "numa-partition.bash")
	require.NoError(t, os.WriteFile(script, []byte(bashCompletion), 0o644))
	offers := func(line ...string) []string {
		t.Helper()
		// COMP_WORDS as bash splits the line, the cursor on its last word.
		words := make([]string, len(line))
		for i, w := range line {
			words[i] = "'" + w + "'"
		}
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c",
			fmt.Sprintf(`source %s; COMP_WORDS=(numa-partition %s); COMP_CWORD=%d; _numa_partition; printf '%%s\n' "${COMPREPLY[@]}"`,
				script, strings.Join(words, " "), len(line)))
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "NUMA_PARTITION_TEST_RUN_MAIN=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	assert.Contains(t, offers("plan", "--"), "--output", "plan --<TAB>")
	assert.Contains(t, offers("plan", "--"), "--host-facts", "plan --<TAB>")
	assert.Equal(t, []string{"--output"}, offers("plan", "--ou"))
	assert.Equal(t, []string{"table", "wide", "json", "yaml", "jsonpath=", "jsonpath-file=", "svg", "dot"}, offers("plan", "-o", ""))
	assert.Equal(t, []string{"json", "jsonpath=", "jsonpath-file="}, offers("status", "--output", "j"))
	assert.ElementsMatch(t, []string{"apply", "allocations", "allocator", "admit"}, offers("a"))
	assert.Equal(t, []string{"init"}, offers("config", "i"))
}
