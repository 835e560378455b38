package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// runCLI runs the app as main does, but returns the exit error instead of
// exiting.
func runCLI(args ...string) (string, error) {
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*cli.Context, error) {}
	err := app.Run(append([]string{"numa-partition", "--log-level", "error"}, args...))
	return out.String(), err
}

// diff needs no systemd: the rendered files against a root, exit 1 while
// they differ, 0 once they are there.
func TestDiffOffline(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	args := []string{"diff", "--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h", "--root", root, "--cgroup-mode", "unified"}
	out, err := runCLI(args...)
	var ec exitCoder
	require.True(t, errors.As(err, &ec), "%v", err)
	assert.Equal(t, 1, ec.ExitCode())
	assert.Contains(t, out, "+++ b/etc/systemd/system/kubelet-node0.service")

	_, err = runCLI("render", "--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h", "--cgroup-mode", "unified", "--out", root)
	require.NoError(t, err)
	out, err = runCLI(args...)
	require.NoError(t, err)
	assert.Empty(t, out)

	// A file changed by hand shows.
	unit := filepath.Join(root, "etc/systemd/system/kubelet-node1.service")
	require.NoError(t, os.WriteFile(unit, []byte("[Unit]\n"), 0o644))
	out, err = runCLI(args...)
	require.Error(t, err)
	assert.Contains(t, out, "--- a/etc/systemd/system/kubelet-node1.service")

	_, err = runCLI(append(args[:len(args)-1], "v3")...)
	assert.ErrorContains(t, err, `--cgroup-mode "v3": allowed are unified, hybrid, legacy`)
}

// --plan applies (here: renders and diffs) exactly a reviewed plan, and
// refuses one this host and config no longer plan.
func TestReviewedPlan(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h"}
	reviewed, err := runCLI(append([]string{"plan", "-o", "json"}, base...)...)
	require.NoError(t, err)
	planFile := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planFile, []byte(reviewed), 0o644))
	_, err = runCLI(append([]string{"render", "--plan", planFile, "--out", filepath.Join(dir, "out")}, base...)...)
	require.NoError(t, err, "the reviewed plan is what is planned now")

	_, err = runCLI(append([]string{"render", "--plan", planFile, "--out", filepath.Join(dir, "out2")},
		"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "other")...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not what this host and config plan now")
	assert.Contains(t, err.Error(), `reviewed "hostname": "h"`)
	_, statErr := os.Stat(filepath.Join(dir, "out2"))
	assert.True(t, os.IsNotExist(statErr), "nothing rendered")
}

// Issue 24 item 16: a plan mismatch compared line i with line i, so a
// line inserted now (a new label) was reported as "reviewed <the next,
// unchanged line>, now <the new one>". The message comes from a line diff.
func TestReviewedPlanMismatchNamesTheChangedLine_Issue24Item16(t *testing.T) {
	a := []byte("{\n  \"labels\": {\n    \"a\": \"1\",\n    \"c\": \"3\"\n  }\n}")
	b := []byte("{\n  \"labels\": {\n    \"a\": \"1\",\n    \"b\": \"2\",\n    \"c\": \"3\"\n  }\n}")
	assert.Equal(t, `before line 4 of its JSON: now also "b": "2"`, summary(lineChanges(a, b, "its JSON")))
	assert.Equal(t, `line 4 of its JSON: reviewed "b": "2", now no such line`, summary(lineChanges(b, a, "its JSON")))
	c := []byte("{\n  \"labels\": {\n    \"a\": \"9\",\n    \"c\": \"3\"\n  }\n}")
	assert.Equal(t, `line 3 of its JSON: reviewed "a": "1", now "a": "9"`, summary(lineChanges(a, c, "its JSON")))
	d := []byte("{\n  \"labels\": {\n    \"a\": \"9\",\n    \"c\": \"3\"\n  },\n  \"x\": 1\n}")
	assert.Equal(t, `line 3 of its JSON: reviewed "a": "1", now "a": "9"; one more change below`, summary(lineChanges(a, d, "its JSON")))
}

// #38 item 9: diff --root on a root without sys/ failed "detecting the
// cgroup mode" though the applied record says it. The record's mode is
// what diff plans and compares for: the files rendered for it show no
// difference, and a record of hybrid is checked as hybrid.
func TestDiffTakesTheRecordsCgroupModeOffline(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h"}
	_, err := runCLI(append([]string{"render", "--cgroup-mode", "unified", "--out", root}, base...)...)
	require.NoError(t, err)
	record := filepath.Join(root, "var/lib/numa-partition/applied.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(record), 0o755))

	require.NoError(t, os.WriteFile(record, []byte(`{"generation": 1, "cgroupMode": "unified"}`), 0o644))
	out, err := runCLI(append([]string{"diff", "--root", root}, base...)...)
	require.NoError(t, err, out)
	assert.Empty(t, out)

	require.NoError(t, os.WriteFile(record, []byte(`{"generation": 1, "cgroupMode": "hybrid"}`), 0o644))
	_, err = runCLI(append([]string{"diff", "--root", root}, base...)...)
	assert.ErrorContains(t, err, `allocator mode "nri" needs cgroup v2, and this host is hybrid`)
}

// The e2e's reboot (issue 37): node 1 of its VM had 2,062,884 kB when the
// plan was reviewed and 2,017,620 kB after the reboot, and the boot's
// `apply --plan` refused the reviewed plan as not what the host plans
// now. A node's memory is a figure each boot measures anew
// (planner.Figures): the reviewed decisions are applied with today's
// figures, for kubelets shown their partitions (hybrid) and for those
// shown the whole machine (unified), whose reservation of the foreign
// node follows its size now. A difference beyond the figures is refused
// still.
func TestReviewedPlanAfterANodesMemoryMoved(t *testing.T) {
	for _, mode := range []string{"hybrid", "unified"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
			base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h", "--cgroup-mode", mode}
			now, err := runCLI(append([]string{"plan", "-o", "json"}, base...)...)
			require.NoError(t, err)
			re := regexp.MustCompile(`"totalBytes": (\d+)`)
			m := re.FindStringSubmatch(now)
			require.NotNil(t, m, "a node's totalBytes in the plan")
			was, err := strconv.ParseUint(m[1], 10, 64)
			require.NoError(t, err)
			before := strings.Replace(now, m[0], fmt.Sprintf(`"totalBytes": %d`, was+44<<20), 1)
			planFile := filepath.Join(dir, "plan.json")
			require.NoError(t, os.WriteFile(planFile, []byte(before), 0o644))
			out := filepath.Join(dir, "out")
			_, err = runCLI(append([]string{"render", "--plan", planFile, "--out", out}, base...)...)
			require.NoError(t, err, "a node's memory moved: the reviewed decisions stand")
			installed, err := os.ReadFile(filepath.Join(out, bundle.PlanPath))
			require.NoError(t, err)
			assert.Contains(t, string(installed), m[0], "installed with today's figures")
			assert.NotContains(t, string(installed), fmt.Sprintf(`"totalBytes": %d`, was+44<<20))

			pods := strings.Replace(before, `"maxPods": 110`, `"maxPods": 111`, 1)
			require.NotEqual(t, before, pods, "a maxPods in the plan")
			require.NoError(t, os.WriteFile(planFile, []byte(pods), 0o644))
			_, err = runCLI(append([]string{"render", "--plan", planFile, "--out", filepath.Join(dir, "out2")}, base...)...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "is not what this host and config plan now")
			assert.Contains(t, err.Error(), `reviewed "maxPods": 111, now "maxPods": 110`, "the change named is the decision, not the memory that moved")
		})
	}
}

// The pid limit is min(pid_max, threads-max), and the kernel derives
// threads-max from the memory: a reboot that moves the memory moves it,
// and with it every kubelet's pids reservation. The e2e's boot refused
// its reviewed plan so (4 lines of pids, after the memory). The reviewed
// decisions are applied with the limit of today, whose reservation the
// kubelets get; a plan reviewed with another split is refused.
func TestReviewedPlanAfterThePidLimitMoved(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	facts := func(limit int) string {
		f := filepath.Join(dir, fmt.Sprintf("facts-%d.json", limit))
		require.NoError(t, os.WriteFile(f, []byte(fmt.Sprintf(`{"hostname": "h", "taskLimit": %d, "cgroupMode": "unified",
  "filesystems": [{"path": "/", "device": 1, "capacityBytes": 68719476736}]}`, limit)), 0o644))
		return f
	}
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg}
	reviewed, err := runCLI(append([]string{"plan", "-o", "json", "--host-facts", facts(31872)}, base...)...)
	require.NoError(t, err)
	require.Contains(t, reviewed, `"limit": 31872`)
	planFile := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planFile, []byte(reviewed), 0o644))

	out := filepath.Join(dir, "out")
	_, err = runCLI(append([]string{"render", "--plan", planFile, "--out", out, "--host-facts", facts(31104)}, base...)...)
	require.NoError(t, err, "the pid limit moved: the reviewed decisions stand")
	installed, err := os.ReadFile(filepath.Join(out, bundle.PlanPath))
	require.NoError(t, err)
	assert.Contains(t, string(installed), `"limit": 31104`, "installed with today's limit")
	kubelet, err := os.ReadFile(filepath.Join(out, "etc/numa-partition/kubelet-node1.yaml"))
	require.NoError(t, err)
	today, err := runCLI(append([]string{"plan", "-o", "json", "--host-facts", facts(31104)}, base...)...)
	require.NoError(t, err)
	var p planner.Plan
	require.NoError(t, json.Unmarshal([]byte(today), &p))
	assert.Contains(t, string(kubelet), fmt.Sprintf("pid: \"%d\"", p.Partitions[1].PIDs.SystemReserved), "node1's kubelet reserves today's split")
}

// A refused plan's journal names every change, not the first alone: the
// e2e's boot refused a plan whose first change was a node's memory (no
// reason to refuse) and said only "4 more changes below".
func TestReviewedPlanRefusalLogsEveryChange(t *testing.T) {
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	text, err := runCLI("plan", "-o", "json", "--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h")
	require.NoError(t, err)
	now, err := planner.ParsePlan("now.json", []byte(text))
	require.NoError(t, err)
	reviewed := strings.ReplaceAll(text, `"maxPods": 110`, `"maxPods": 111`)
	require.Equal(t, 2, strings.Count(reviewed, `"maxPods": 111`), "both kubelets' maxPods")
	file := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(file, []byte(reviewed), 0o644))

	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	err = checkReviewed(file, now, func(planner.Figures) (*planner.Plan, error) { return now, nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "one more change below")
	assert.Equal(t, 2, strings.Count(logs.String(), `reviewed \"maxPods\": 111, now \"maxPods\": 110`), logs.String())
}
