package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/slices/render"
)

// The allocator unit reads the rendered plan.json: the allocator must get
// exactly the configuration it would get from planning the config anew, so
// that it decides like the kubelet rendered from that plan.
func TestServePlanFromRenderedPlan(t *testing.T) {
	sysfs := fixtureSys("hwloc-32amd64-4s2n4c-cgroup2")
	conf := filepath.Join("..", "..", "examples", "4socket", "config.toml")
	out := filepath.Join(t.TempDir(), "root")
	_, err := runDiscover(t, "--sysfs", sysfs, "--config", conf, "render", "--out", out)
	require.NoError(t, err)

	configs := func(args ...string) map[string]allocator.Config {
		got := map[string]allocator.Config{}
		app := newApp()
		app.Commands = []*cli.Command{{
			Name:  "probe",
			Flags: []cli.Flag{&cli.StringFlag{Name: "plan"}, hostnameFlag()},
			Action: func(c *cli.Context) error {
				plan, topo, err := servePlan(c)
				if err != nil {
					return err
				}
				for _, p := range plan.Partitions {
					cfg, err := daemon.ConfigFromPlan(p, topo)
					if err != nil {
						return err
					}
					got[p.Name] = cfg
				}
				return nil
			},
		}}
		require.NoError(t, app.Run(append([]string{"numa-partition", "--log-level", "error", "--sysfs", sysfs, "--config", conf}, args...)))
		return got
	}
	fromConfig := configs("probe")
	fromRendered := configs("probe", "--plan", filepath.Join(out, render.PlanPath))
	require.Len(t, fromConfig, 4)
	assert.Equal(t, fromConfig, fromRendered)

	// A file that is not a plan is refused with its name.
	app := newApp()
	err = app.Run([]string{"numa-partition", "--sysfs", sysfs, "allocator", "serve", "--partition", "node0", "--plan", conf})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config.toml: not a plan (plan -o json)")
}
