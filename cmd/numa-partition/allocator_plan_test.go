package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/partition/fromplan"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
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
					cfg, err := fromplan.AllocatorConfig(p, topo)
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
	fromRendered := configs("probe", "--plan", filepath.Join(out, bundle.PlanPath))
	require.Len(t, fromConfig, 4)
	assert.Equal(t, fromConfig, fromRendered)

	// A file that is not a plan is refused with its name.
	app := newApp()
	err = app.Run([]string{"numa-partition", "--sysfs", sysfs, "allocator", "serve", "--partition", "node0", "--plan", conf})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config.toml: not a plan (plan -o json)")
}

// Issue 24 item 11: under --no-nri or runtime.mode = "shared" the daemon
// ignored the plan's socket, state dir, socket group, metrics address and
// labels (socket mode 600 and gid 0 instead of 660 and the planned
// group): they were taken only on the NRI path.
func TestAllocatorHonoursThePlanInEveryMode_Issue24Item11(t *testing.T) {
	sysfs := fixtureSys("hwloc-32amd64-4s2n4c-cgroup2")
	allocator := "[allocator]\nsocket = \"/run/np-alloc/{partition}.sock\"\nstate_dir = \"/var/lib/np-alloc/{partition}\"\nsocket_group = \"kube\"\nmetrics_port = 19400\nsync_before_answer = true\n" +
		"[kubelet]\nhostname = \"h\"\nlabels = { \"example.com/pool\" = \"a\" }\n"
	// metrics: partition 1's port, base + 1 × port_stride (0 in namespace
	// mode, 10 in host mode), on its address (10.212.0.3, the pool's
	// second) in namespace mode, on the host's in host mode.
	for name, c := range map[string]struct{ config, flag, metrics string }{
		"no-nri":         {allocator, "--no-nri", "10.212.0.3:19400"},
		"shared runtime": {allocator + "[runtime]\nmode = \"shared\"\nendpoint = \"unix:///run/containerd/containerd.sock\"\n[network]\nmode = \"host\"\n", "", ":19410"},
		"nri":            {allocator, "", "10.212.0.3:19400"},
	} {
		t.Run(name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "config.toml")
			require.NoError(t, os.WriteFile(conf, []byte(c.config), 0o600))
			var args []string
			if c.flag != "" {
				args = append(args, c.flag)
			}
			opts := probeAllocConfig(t, sysfs, conf, func(*cli.Context) daemon.Options {
				return daemon.Options{Partition: "node2", Socket: daemon.DefaultSocket("node2"), StateDir: daemon.DefaultStateDir("node2")}
			}, args...)
			assert.Equal(t, "/run/np-alloc/node2.sock", opts.Socket)
			assert.Equal(t, "/var/lib/np-alloc/node2", opts.StateDir)
			assert.Equal(t, "kube", opts.SocketGroup)
			assert.True(t, opts.SyncBeforeAnswer, "allocator.sync_before_answer")
			assert.Equal(t, c.metrics, opts.MetricsAddr)
			assert.Equal(t, "a", opts.Labels["example.com/pool"])
			assert.Equal(t, "node2", opts.Labels["numa-partition.io/partition"])
		})
	}
}

// Issue 27: the plan carries the metrics port as a number, which the
// allocator serves (fromplan.MetricsAddr: since issue 40 on every address
// of the host in host mode, as kubelet); a host's rendered plan.json from
// a build before it (metricsAddr "127.0.0.1:PORT") still starts its
// allocators on the same port, and --metrics-addr still wins.
func TestAllocatorMetricsPortFromThePlan_Issue27(t *testing.T) {
	sysfs := fixtureSys("hwloc-32amd64-4s2n4c-cgroup2")
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(conf, []byte("[kubelet]\nhostname = \"h\"\n[network]\nmode = \"host\"\n[allocator]\nmetrics_port = 19400\n"), 0o600))
	out := filepath.Join(dir, "root")
	_, err := runDiscover(t, "--sysfs", sysfs, "--config", conf, "render", "--out", out)
	require.NoError(t, err)
	rendered, err := os.ReadFile(filepath.Join(out, bundle.PlanPath))
	require.NoError(t, err)
	require.True(t, strings.Contains(string(rendered), `"metricsPort": 19410,`), "the rendered plan has the number")
	// What a build before metricsPort rendered.
	oldText := regexp.MustCompile(`"metricsPort": ([0-9]+)`).ReplaceAllString(string(rendered), `"metricsAddr": "127.0.0.1:$1"`)
	require.True(t, strings.Contains(oldText, `"metricsAddr": "127.0.0.1:19410",`) && !strings.Contains(oldText, "metricsPort"), "the edit applies")
	old := filepath.Join(dir, "old-plan.json")
	require.NoError(t, os.WriteFile(old, []byte(oldText), 0o600))

	probe := func(args ...string) string {
		return probeAllocConfig(t, sysfs, conf, func(c *cli.Context) daemon.Options {
			return daemon.Options{Partition: "node2", MetricsAddr: c.String("metrics-addr")}
		}, append([]string{"--no-nri"}, args...)...).MetricsAddr
	}
	assert.Equal(t, ":19410", probe())
	assert.Equal(t, ":19410", probe("--plan", filepath.Join(out, bundle.PlanPath)))
	assert.Equal(t, ":19410", probe("--plan", old))
	assert.Equal(t, "[::1]:9999", probe("--plan", old, "--metrics-addr", "[::1]:9999"))
}

// Issue 40: metrics are on by default and, in namespace mode, served on
// the partition's own address (its Node's InternalIP), where the
// cluster's Prometheus finds every partition; metrics_port = 0 is off.
func TestAllocatorMetricsOnThePartitionsAddress_Issue40(t *testing.T) {
	sysfs := fixtureSys("hwloc-32amd64-4s2n4c-cgroup2")
	conf := filepath.Join(t.TempDir(), "config.toml")
	probe := func(config string) string {
		require.NoError(t, os.WriteFile(conf, []byte("[kubelet]\nhostname = \"h\"\n"+config), 0o600))
		return probeAllocConfig(t, sysfs, conf, func(c *cli.Context) daemon.Options {
			return daemon.Options{Partition: "node2", MetricsAddr: c.String("metrics-addr")}
		}, "--no-nri").MetricsAddr
	}
	got := probe("")
	out, err := runDiscover(t, "--sysfs", sysfs, "--config", conf, "plan", "-o", "json")
	require.NoError(t, err)
	var p planner.Plan
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	addr := ""
	for _, part := range p.Partitions {
		if part.Name == "node2" {
			require.NotNil(t, part.Network, "namespace mode by default")
			addr = part.Network.Address.Addr().String()
		}
	}
	require.NotEmpty(t, addr, "partition node2 in the plan")
	assert.Equal(t, net.JoinHostPort(addr, "9464"), got)
	assert.Empty(t, probe("[allocator]\nmetrics_port = 0\n"))
}

// Issue 40: the daemon writes its partition's NumaPartitionDrifted
// condition from a background task, in kubelet mode too (no NRI: no
// Runtime hook), unless --no-node-condition.
func TestAllocatorWritesTheNodeCondition_Issue40(t *testing.T) {
	sysfs := fixtureSys("hwloc-32amd64-4s2n4c-cgroup2")
	conf := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(conf, []byte("[kubelet]\nhostname = \"h\"\n"), 0o600))
	start := func(*cli.Context) daemon.Options { return daemon.Options{Partition: "node2"} }
	opts := probeAllocConfig(t, sysfs, conf, start, "--no-nri")
	assert.Nil(t, opts.Runtime, "no runtime hook without NRI")
	assert.Len(t, opts.Background, 1, "the Node condition's task")
	assert.Empty(t, probeAllocConfig(t, sysfs, conf, start, "--no-nri", "--no-node-condition").Background)
}

// probeAllocConfig runs allocConfigFromPlan as the allocator command
// does, on the options start gives, with the allocator's plan flags
// (args after the command), and returns the options it filled.
func probeAllocConfig(t *testing.T, sysfs, conf string, start func(*cli.Context) daemon.Options, args ...string) daemon.Options {
	t.Helper()
	var opts daemon.Options
	app := newApp()
	app.Commands = []*cli.Command{{
		Name: "probe",
		Flags: []cli.Flag{&cli.StringFlag{Name: "plan"}, &cli.BoolFlag{Name: "no-nri"}, &cli.StringFlag{Name: "socket"},
			&cli.StringFlag{Name: "state-dir"}, &cli.StringFlag{Name: "socket-group"}, &cli.StringFlag{Name: "metrics-addr"}, &cli.BoolFlag{Name: "no-node-condition"}},
		Action: func(c *cli.Context) error {
			opts = start(c)
			return allocConfigFromPlan(c, &opts)
		},
	}}
	require.NoError(t, app.Run(append([]string{"numa-partition", "--log-level", "error", "--sysfs", sysfs, "--config", conf, "probe"}, args...)))
	return opts
}

// Issue 38 items 8 and 9: the daemon trusted its plan file (stateDir
// "/etc", relative socket and state paths, a node of 2^64-1 bytes, after
// which a 4 Pi pod was admitted), named /etc/numa-partition/config.toml
// when --plan FILE lacked the partition, and took --partition ../../etc
// into its paths. The plan file is held to the rules plan writes by
// (its nodes count the machine's memory: TestServeCountsTheMachinesMemory);
// errors name the file given.
func TestServeHoldsItsPlanFileToThePlannersRules_Issue38(t *testing.T) {
	sysfs, _, rendered := renderedFourSocketPlan(t)
	serve := func(plan, partition string) error {
		file := filepath.Join(t.TempDir(), "plan.json")
		require.NoError(t, os.WriteFile(file, []byte(plan), 0o600))
		return newApp().Run([]string{"numa-partition", "--log-level", "error", "--sysfs", sysfs, "allocator", "serve", "--partition", partition, "--plan", file,
			"--state-dir", filepath.Join(t.TempDir(), "state"), "--socket", filepath.Join(t.TempDir(), "s.sock")})
	}
	for edit, want := range map[[2]string]string{
		{`"stateDir": "/var/lib/numa-partition/node0"`, `"stateDir": "/etc"`}:    `key "allocator.state_dir": "/etc" is not below /var/lib/`,
		{`"socket": "/run/numa-partition/node0.sock"`, `"socket": "run/x.sock"`}: `key "allocator.socket": "run/x.sock" is not an absolute path`,
		{`"totalBytes": 17177686016`, `"totalBytes": 18446744073709551615`}:      `partition node0: memory of node 0: totalBytes 18446744073709551615 is more than 4Pi`,
	} {
		require.True(t, strings.Contains(string(rendered), edit[0]), edit[0])
		err := serve(strings.Replace(string(rendered), edit[0], edit[1], 1), "node0")
		require.Error(t, err, edit[1])
		assert.Contains(t, err.Error(), want, edit[1])
	}
	err := serve(string(rendered), "node9")
	require.Error(t, err)
	assert.Regexp(t, `^--partition "node9" is not in /tmp/\S+/plan.json; planned partitions: node0, node2, node4, lowlat$`, err.Error())
	assert.NotContains(t, err.Error(), "config.toml")

	for _, args := range [][]string{
		{"allocator", "reset-state", "--partition", "../../etc"},
		{"allocator", "serve", "--partition", "../../etc"},
		{"allocations", "--partition", "../x"},
	} {
		err := newApp().Run(append([]string{"numa-partition"}, args...))
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), `--partition: partition name "`, args)
	}
}

// The e2e's reboot (issue 37): node 1 of its VM had 2,062,884 kB when
// planned and 2,017,620 kB after the reboot, and the allocator, refusing
// a plan that gave a node more than the machine has, failed at every
// start, and with it, in nri mode, every container of the partition. Now
// the daemon counts each node's memory as the machine has it now, in
// either direction (kubelet, whose decisions it makes, does), and a plan
// file's node of 16000Gi (#38: a hand-edited size was served) counts the
// machine's 16775084Ki too.
func TestServeCountsTheMachinesMemory(t *testing.T) {
	sysfs, conf, rendered := renderedFourSocketPlan(t)
	const machine = 16775084 * 1024 // node 0's MemTotal in the fixture
	for _, planned := range []string{"17177686016", "17179869184000", "8589934592"} {
		edit := `"totalBytes": 17177686016`
		require.True(t, strings.Contains(string(rendered), edit))
		file := filepath.Join(t.TempDir(), "plan.json")
		require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(rendered), edit, `"totalBytes": `+planned, 1)), 0o600))
		opts := probeAllocConfig(t, sysfs, conf, func(*cli.Context) daemon.Options {
			return daemon.Options{Partition: "node0"}
		}, "--plan", file)
		require.NotEmpty(t, opts.Config.Nodes, planned)
		assert.Equal(t, uint64(machine), opts.Config.Nodes[0].Memory, "planned %s bytes", planned)
	}
}

// renderedFourSocketPlan is the plan.json render writes for examples/4socket
// on a 4-socket fixture, with that fixture and config.
func renderedFourSocketPlan(t *testing.T) (sysfs, conf string, rendered []byte) {
	t.Helper()
	sysfs = fixtureSys("hwloc-32amd64-4s2n4c-cgroup2")
	conf = filepath.Join("..", "..", "examples", "4socket", "config.toml")
	out := filepath.Join(t.TempDir(), "root")
	_, err := runDiscover(t, "--sysfs", sysfs, "--config", conf, "render", "--out", out)
	require.NoError(t, err)
	rendered, err = os.ReadFile(filepath.Join(out, bundle.PlanPath))
	require.NoError(t, err)
	return sysfs, conf, rendered
}
