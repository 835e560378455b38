package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// #38 item 9: apply --plan reported a changed line of a reviewed plan at
// an unchanged one (line 343 changed, "line 341": the file of plan -o
// json has apiVersion and kind, which the JSON it was compared as had
// not), and a YAML plan got a JSON line number. The line named is now the
// file's own: it holds what the message quotes as reviewed.
func TestReviewedPlanMismatchNamesTheFilesLine_Issue38Item9(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml"))
	require.NoError(t, err)
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.toml"), filepath.Join(dir, "after.toml")
	require.NoError(t, os.WriteFile(before, cfg, 0o644))
	// Node 1's hugepages: a change deep in the plan, below partition 0.
	changed := strings.Replace(string(cfg), "count = 24", "count = 25", 1)
	require.NotEqual(t, string(cfg), changed)
	require.NoError(t, os.WriteFile(after, []byte(changed), 0o644))
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--hostname", "h"}
	where := regexp.MustCompile(`\((?:before )?line (\d+) of its (JSON|YAML): reviewed (.*), now (.*?)(?:; .*)?\): run plan again`)

	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			reviewed, err := runCLI(append([]string{"plan", "-o", format, "--config", before}, base...)...)
			require.NoError(t, err)
			planFile := filepath.Join(dir, "plan."+format)
			require.NoError(t, os.WriteFile(planFile, []byte(reviewed), 0o644))

			_, err = runCLI(append([]string{"render", "--plan", planFile, "--config", after, "--out", filepath.Join(dir, "out-"+format)}, base...)...)
			require.Error(t, err)
			m := where.FindStringSubmatch(err.Error())
			require.NotNil(t, m, err.Error())
			assert.Equal(t, strings.ToUpper(format), m[2])
			line, _ := strconv.Atoi(m[1])
			lines := strings.Split(reviewed, "\n")
			require.Less(t, line-1, len(lines))
			assert.Equal(t, m[3], strings.TrimSuffix(strings.TrimSpace(lines[line-1]), ","), "line %d of the file is what the message quotes", line)
			// 24 pages of 2Mi on node 1 then, 25 now: the first line the
			// count changes (the JSON's hugepages count, the YAML's
			// nodeResources, which it sorts first).
			assert.Regexp(t, `24|48Mi`, m[3])
			assert.Regexp(t, `25|50Mi`, m[4])
		})
	}
}

// A plan file that is not as this build writes its plan (here: JSON on
// one line) is compared as this build writes it, and the message says
// its numbers are of that text, not of the file.
func TestReviewedPlanMismatchOfAnEditedFileSaysWhichText(t *testing.T) {
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg}
	reviewed, err := runCLI(append([]string{"plan", "-o", "json", "--hostname", "h"}, base...)...)
	require.NoError(t, err)
	oneLine := regexp.MustCompile(`\n\s*`).ReplaceAllString(reviewed, "")
	planFile := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(planFile, []byte(oneLine), 0o644))

	_, err = runCLI(append([]string{"render", "--plan", planFile, "--hostname", "h", "--out", filepath.Join(t.TempDir(), "out")}, base...)...)
	require.NoError(t, err, "the same plan, written otherwise, is the same plan")
	_, err = runCLI(append([]string{"render", "--plan", planFile, "--hostname", "other", "--out", filepath.Join(t.TempDir(), "out")}, base...)...)
	require.Error(t, err)
	assert.Regexp(t, `line \d+ of its JSON as this build writes it: reviewed "hostname": "h", now "hostname": "other"`, err.Error())
}
