package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
	"github.com/numa-partition/numa-partition/slices/apply/status"
)

// runMain runs a command line as main does: standard output and standard
// error apart, the error printed as main prints it, and the exit status.
func runMain(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errOut
	err := runArgs(context.Background(), app, append([]string{"numa-partition"}, args...))
	code = exitStatus(err, &errOut)
	return out.String(), errOut.String(), code
}

// Issue 40: `help CMD` printed "No help topic for 'help'" and exited 3;
// as in git and kubectl it is CMD's help, exit 0, and so is
// `help CMD SUBCMD`. A topic that is no command exits 3, naming it.
func TestHelpCommand_Issue40(t *testing.T) {
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"help", "apply"}, "numa-partition apply - partition the host"},
		{[]string{"help", "config", "init"}, "numa-partition config init - print a commented config"},
		{[]string{"--log-level", "error", "help", "status"}, "numa-partition status - show the partitions' units"},
		{[]string{"help"}, "numa-partition - turn one multi-socket host"},
		{[]string{"config", "help", "init"}, "numa-partition config init - print a commented config"},
	} {
		stdout, stderr, code := runMain(tc.line...)
		assert.Equal(t, 0, code, "%q: %s", tc.line, stderr)
		assert.Contains(t, stdout, tc.want, "%q", tc.line)
	}
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"help", "nosuch"}, "numa-partition: unknown command \"nosuch\" for \"numa-partition\"\nSee 'numa-partition --help' for usage.\n"},
		{[]string{"help", "config", "nosuch"}, "numa-partition: unknown command \"nosuch\" for \"numa-partition config\"\nSee 'numa-partition config --help' for usage.\n"},
		{[]string{"nosuch"}, "numa-partition: unknown command \"nosuch\" for \"numa-partition\"\nSee 'numa-partition --help' for usage.\n"},
		{[]string{"config", "nosuch"}, "numa-partition: unknown command \"nosuch\" for \"numa-partition config\"\nSee 'numa-partition config --help' for usage.\n"},
	} {
		stdout, stderr, code := runMain(tc.line...)
		assert.Equal(t, 3, code, "%q", tc.line)
		assert.Empty(t, stdout, "%q", tc.line)
		assert.Equal(t, tc.want, stderr, "%q", tc.line)
	}
}

// Issue 40: an unknown flag printed the whole help on standard output,
// and so did a required flag left out; each is one line naming the flag
// as typed and where the usage is, on standard error, exit 2 (bad flags,
// as every other usage error).
func TestUsageErrorIsOneLine_Issue40(t *testing.T) {
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"apply", "--nosuch"}, "numa-partition: unknown flag --nosuch\nSee 'numa-partition apply --help' for usage.\n"},
		{[]string{"--nosuch", "status"}, "numa-partition: unknown flag --nosuch\nSee 'numa-partition --help' for usage.\n"},
		{[]string{"config", "init", "-x"}, "numa-partition: unknown flag -x\nSee 'numa-partition config init --help' for usage.\n"},
		{[]string{"status", "--probe-timeout", "soon"}, "numa-partition: invalid value \"soon\" for flag --probe-timeout: parse error\nSee 'numa-partition status --help' for usage.\n"},
		{[]string{"config", "init", "-o"}, "numa-partition: flag needs an argument: -o\nSee 'numa-partition config init --help' for usage.\n"},
		{[]string{"kubelet-state", "repair"}, "numa-partition: flag --root-dir is required\nSee 'numa-partition kubelet-state repair --help' for usage.\n"},
		{[]string{"network", "up", "--address", "10.0.0.2/24"}, "numa-partition: flags --namespace, --host-link, --uplink are required\nSee 'numa-partition network up --help' for usage.\n"},
		// network's subcommands share their flags: each still checks every
		// required one it has, not only the first subcommand met.
		{[]string{"network", "down"}, "numa-partition: flags --namespace, --host-link are required\nSee 'numa-partition network down --help' for usage.\n"},
		{[]string{"network", "uplink", "down"}, "numa-partition: flag --uplink is required\nSee 'numa-partition network uplink down --help' for usage.\n"},
		{[]string{"network", "uplink", "up"}, "numa-partition: flag --uplink is required\nSee 'numa-partition network uplink up --help' for usage.\n"},
	} {
		stdout, stderr, code := runMain(tc.line...)
		assert.Equal(t, 2, code, "%q", tc.line)
		assert.Empty(t, stdout, "%q", tc.line)
		assert.Equal(t, tc.want, stderr, "%q", tc.line)
	}
}

// Issue 40: -v was the version where every Kubernetes tool means the
// verbosity (kubectl -v=N). It is the log level now: 0 info, 1 and more
// debug, before or after the command; --version prints the version.
func TestVerbosityFlag_Issue40(t *testing.T) {
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	ctx := context.Background()
	for _, line := range [][]string{{"-v", "2", "version"}, {"version", "--v=4"}, {"-v=1", "config", "reference"}, {"version", "-v", "1", "--log-level", "debug"}} {
		_, stderr, code := runMain(line...)
		require.Equal(t, 0, code, "%q: %s", line, stderr)
		assert.True(t, slog.Default().Enabled(ctx, slog.LevelDebug), "%q logs debug", line)
	}
	_, stderr, code := runMain("version", "-v=0")
	require.Equal(t, 0, code, stderr)
	assert.False(t, slog.Default().Enabled(ctx, slog.LevelDebug), "-v 0 is info")
	assert.True(t, slog.Default().Enabled(ctx, slog.LevelInfo), "-v 0 is info")

	stdout, _, code := runMain("--version")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "numa-partition version ")
	stdout, _, _ = runMain("--help")
	assert.Contains(t, stdout, "-v N ")
	assert.Contains(t, stdout, "as kubectl's -v=N: 0 is --log-level info, 1 or more debug")

	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"-v"}, "flag needs an argument: -v (-v N is the log verbosity, as kubectl's; the version is --version)"},
		{[]string{"version", "-q", "-v", "3"}, "--quiet and -v 3: choose one"},
		{[]string{"version", "--log-level", "warn", "-v", "0"}, "--log-level warn and -v 0: choose one"},
		{[]string{"version", "-v", "-1"}, "-v -1: allowed are 0 (--log-level info) and more (--log-level debug)"},
	} {
		stdout, stderr, code := runMain(tc.line...)
		assert.Equal(t, 2, code, "%q", tc.line)
		assert.Empty(t, stdout, "%q", tc.line)
		assert.Contains(t, stderr, tc.want, "%q", tc.line)
	}
}

// offlineRoot is a --root no systemd runs on with a record of generation
// 1 and nothing else: status reads it offline, remove --dry-run lists
// what it would do.
func offlineRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "var", "lib", "numa-partition")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "applied.json"), []byte(`{"generation": 1}`), 0o644))
	return root
}

// warningLine is a warning's line (warnAll).
var warningLine = regexp.MustCompile(`(?m)^warning: `)

// Issue 40: a dry run's "warning: offline …" was printed on standard
// output inside the report, and admit's and allocations' went to the
// process's stderr past the app's; every warning goes to the app's
// standard error, and standard output holds the report alone (with
// --output json the warnings stay in the object too).
func TestWarningsGoToStderr_Issue40(t *testing.T) {
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h", "--root", t.TempDir(), "--cgroup-mode", "unified"}
	stdout, stderr, code := runMain(append([]string{"apply", "--dry-run"}, base...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "would run ")
	assert.False(t, warningLine.MatchString(stdout), "a warning on standard output")
	assert.Contains(t, stderr, "warning: offline (no systemd runs for this root)")

	stdout, stderr, code = runMain(append([]string{"apply", "--dry-run", "-o", "json"}, base...)...)
	require.Equal(t, 0, code, stderr)
	var rep struct{ Warnings []string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	assert.NotEmpty(t, rep.Warnings, "the object keeps its warnings")
	assert.Contains(t, stderr, "warning: offline (no systemd runs for this root)")

	stdout, stderr, code = runMain("remove", "--dry-run", "--root", offlineRoot(t))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "would remove (dry run, nothing done) generation 1")
	assert.False(t, warningLine.MatchString(stdout), "a warning on standard output:\n%s", stdout)
	assert.Contains(t, stderr, "warning: offline (no systemd runs for this root)")

	// A daemon that does not answer: node1's socket is a plain file.
	sockDir := fakeDaemon(t)
	require.NoError(t, os.WriteFile(filepath.Join(sockDir, "node1.sock"), nil, 0o644))
	stdout, stderr, code = runMain("allocations", "--socket-dir", sockDir)
	assert.Equal(t, 1, code, "a daemon did not answer")
	assert.Contains(t, stdout, "node0")
	assert.NotContains(t, stdout, "node1")
	assert.Contains(t, stderr, "warning: allocations: partition node1: ")
	_, stderr, _ = runMain("admit", "-f", "../../examples/workloads/pod-red.yaml", "--socket-dir", sockDir)
	assert.Contains(t, stderr, "warning: admit: skipping partition node1: ")
}

// Issue 40: status of a root with nothing applied whose cgroup mode it
// cannot read printed "NOT-APPLIED (cgroup mode )"; and an offline root
// with nothing wrong in it exited 1 where docs/apply.md says 0 (offline
// is no fault found, only what a live host would say not read).
func TestStatusOfflineAndNotApplied_Issue40(t *testing.T) {
	stdout, stderr, code := runMain("status", "--root", t.TempDir())
	assert.Equal(t, 1, code, "nothing applied")
	assert.Equal(t, "NOT-APPLIED: nothing applied on this host (numa-partition apply); cgroup mode unknown\n", stdout, stderr)

	root := offlineRoot(t)
	stdout, stderr, code = runMain("status", "--root", root)
	assert.Equal(t, 0, code, "offline, nothing wrong: %s", stderr)
	assert.True(t, strings.HasPrefix(stdout, "OFFLINE: generation 1 applied "), stdout)
	assert.Contains(t, stdout, ", cgroup mode unknown\noffline (no systemd runs for this root): ")
	stdout, _, code = runMain("status", "--root", root, "-o", "json")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, `"health": "offline"`)

	assert.NoError(t, statusExit(status.Healthy))
	for _, h := range []status.Health{status.Degraded, status.NotApplied} {
		var ec exitCoder
		require.ErrorAs(t, statusExit(h), &ec, "%s", h)
		assert.Equal(t, 1, ec.ExitCode(), "%s", h)
	}
}

// Issue 40: allocations with no pod held printed a bare header; it says
// so in one line on stderr (kubectl's "No resources found"), no header,
// and --output json is still the list, its items' allocations empty.
func TestAllocationsNoneHeld_Issue40(t *testing.T) {
	// A daemon holding nothing; its null list is read as empty.
	sockDir := serveDaemon(t, map[string]any{daemonapi.PathAllocations: daemonapi.AllocationsResponse{Partition: "node0", Generation: 3}})
	stdout, stderr, code := runMain("allocations", "--socket-dir", sockDir)
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout, "no header")
	assert.Equal(t, "No allocations found in partition node0.\n", stderr)

	stdout, stderr, code = runMain("allocations", "--socket-dir", sockDir, "-o", "json")
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Partition   string            `json:"partition"`
			Allocations []json.RawMessage `json:"allocations"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &list), stdout)
	assert.Equal(t, kindAllocationList, list.Kind)
	require.Len(t, list.Items, 1)
	assert.Equal(t, "node0", list.Items[0].Partition)
	assert.NotNil(t, list.Items[0].Allocations, "[], not null: %s", stdout)
	assert.Empty(t, list.Items[0].Allocations)

	// Some held: the table, header first.
	stdout, _, code = runMain("allocations", "--socket-dir", fakeDaemon(t))
	assert.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(stdout, "PARTITION "), stdout)
}

// Issue 40: config init could not write its file on a fresh host
// (`> /etc/numa-partition/config.toml`: no such directory). --write
// makes the directories and writes the file atomically below --root,
// keeps an existing file unless --force, and follows no link out of the
// root.
func TestConfigInitWrite_Issue40(t *testing.T) {
	root := t.TempDir()
	line := func(extra ...string) []string {
		return append([]string{"config", "init", "--sysfs", fixtureSys("qemu-2node-v2"), "--hostname", "h", "--root", root}, extra...)
	}
	want, stderr, code := runMain(line()...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, want, "[[partition]]", "the printed config")

	dir := filepath.Join(root, "etc", "numa-partition")
	file := filepath.Join(dir, "config.toml")
	stdout, stderr, code := runMain(line("--write")...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "wrote "+file+": edit it, then numa-partition config check\n", stdout)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "the file is what init prints")
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")

	// The host's edited config is kept, unless --force.
	require.NoError(t, os.WriteFile(file, []byte("# edited\n"), 0o644))
	_, stderr, code = runMain(line("--write")...)
	assert.Equal(t, 2, code)
	assert.Equal(t, "numa-partition: config init --write: "+file+" exists: it is kept (--force replaces it)\n", stderr)
	got, _ = os.ReadFile(file)
	assert.Equal(t, "# edited\n", string(got))
	_, stderr, code = runMain(line("--write", "--force")...)
	require.Equal(t, 0, code, stderr)
	got, _ = os.ReadFile(file)
	assert.Equal(t, want, string(got))

	// A link at PATH's name is replaced with --force, never followed;
	// a link on the way resolves inside the root (where this one's
	// target does not exist).
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "config.toml"), []byte("outside\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "config.toml"), filepath.Join(dir, "link.toml")))
	_, stderr, code = runMain(line("--write", "/etc/numa-partition/link.toml")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "link.toml exists: it is kept")
	_, stderr, code = runMain(line("--write", "--force", "/etc/numa-partition/link.toml")...)
	require.Equal(t, 0, code, stderr)
	fi, err = os.Lstat(filepath.Join(dir, "link.toml"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the link replaced by the file")
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "etc", "escape")))
	_, stderr, code = runMain(line("--write", "--force", "/etc/escape/config.toml")...)
	assert.Equal(t, 2, code, "a link that leads nowhere inside the root")
	assert.Contains(t, stderr, "/etc/escape is in the way")
	got, _ = os.ReadFile(filepath.Join(outside, "config.toml"))
	assert.Equal(t, "outside\n", string(got), "nothing written outside --root")

	// Without --root a relative PATH is the working directory's.
	t.Chdir(t.TempDir())
	_, stderr, code = runMain("config", "init", "--generic", "--write", "sub/config.toml")
	require.Equal(t, 0, code, stderr)
	_, err = os.Stat(filepath.Join("sub", "config.toml"))
	assert.NoError(t, err)

	for _, tc := range []struct {
		line []string
		want string
	}{
		{line("/etc/x.toml"), `config init: "/etc/x.toml": a PATH is where --write writes; without --write the config is printed`},
		{line("--force"), "config init: --force replaces the file --write writes: allowed only with --write"},
		{line("--write", "/a", "/b"), `config init --write: one PATH, got ["/a" "/b"]`},
		{line("--write", "x.toml"), `config init --write "x.toml": a path below --root ` + root + ` must be absolute`},
	} {
		_, stderr, code := runMain(tc.line...)
		assert.Equal(t, 2, code, "%q", tc.line)
		assert.Contains(t, stderr, tc.want, "%q", tc.line)
	}
}
