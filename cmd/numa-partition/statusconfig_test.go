package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// status says when the config plans otherwise than the plan applied
// (#37: an edit since the last apply is not live, and the boot refuses
// it), and not when only the figures a reboot measures anew moved.
func TestStatusReviewsTheConfig(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	data, err := os.ReadFile(filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, data, 0o644))
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg}
	_, err = runCLI(append(base, "render", "--hostname", "h", "--cgroup-mode", "unified", "--out", root)...)
	require.NoError(t, err)

	review := func() *status.ConfigReview {
		var got *status.ConfigReview
		app := newApp()
		app.Commands = append(app.Commands, &cli.Command{Name: "review-config",
			Flags:  []cli.Flag{rootFlag(), cgroupModeFlagDef(), &cli.StringFlag{Name: "hostname"}},
			Action: func(c *cli.Context) error { got = reviewConfig(c, c.String("root")); return nil }})
		require.NoError(t, app.Run(append(append([]string{"numa-partition", "--log-level", "error"}, base...),
			"review-config", "--root", root, "--cgroup-mode", "unified", "--hostname", "h")))
		return got
	}
	r := review()
	require.NotNil(t, r)
	assert.Equal(t, status.ConfigApplied, r.State, r.Error)
	assert.Empty(t, configWarning(r, 3))

	// A reboot moved a node's memory: the same decisions.
	planFile := filepath.Join(root, bundle.PlanPath)
	plan, err := os.ReadFile(planFile)
	require.NoError(t, err)
	m := regexp.MustCompile(`"totalBytes": (\d+)`).FindSubmatch(plan)
	require.NotNil(t, m)
	var was uint64
	_, err = fmt.Sscan(string(m[1]), &was)
	require.NoError(t, err)
	moved := strings.Replace(string(plan), string(m[0]), fmt.Sprintf(`"totalBytes": %d`, was-44<<20), 1)
	require.NoError(t, os.WriteFile(planFile, []byte(moved), 0o644))
	assert.Equal(t, status.ConfigApplied, review().State)

	// The config edited since.
	edited := strings.Replace(string(data), `kube_reserved_memory = "64Mi"`, "kube_reserved_memory = \"64Mi\"\nmax_pods = 99", 1)
	require.NotEqual(t, string(data), edited)
	require.NoError(t, os.WriteFile(cfg, []byte(edited), 0o644))
	r = review()
	assert.Equal(t, status.ConfigChanged, r.State, r.Error)
	assert.Contains(t, r.Change, `reviewed "maxPods": 110, now "maxPods": 99`)
	assert.Equal(t, 2, r.Changes, "both kubelets' maxPods")
	assert.Contains(t, configWarning(r, 3), "plans otherwise than generation 3 applied")

	// A config that does not plan.
	require.NoError(t, os.WriteFile(cfg, []byte("[kubelet]\nmax_pods = \"many\"\n"), 0o644))
	r = review()
	assert.Equal(t, status.ConfigError, r.State)
	assert.Contains(t, r.Error, "max_pods")
	assert.Contains(t, configWarning(r, 3), "could not be compared")

	// No config file: nothing to compare.
	require.NoError(t, os.Remove(cfg))
	assert.Nil(t, review())
}
