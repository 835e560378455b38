package planner

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// A plan file is held to every rule render and kubeletgen once checked
// again themselves (#39: downstream takes the plan as decided): the
// kubelet's cgroup root, strict-cpu-reservation under the static policy,
// the runtime endpoint and the planner's one port rule.
func TestCheckPlanFileHoldsWhatDownstreamTrusts(t *testing.T) {
	c, err := config.Parse("config.toml", []byte("[kubelet]\nhostname = \"h\"\n"))
	require.NoError(t, err)
	plan, err := NewPlan(synth(seedSpec), c)
	require.NoError(t, err)
	data, err := json.Marshal(plan)
	require.NoError(t, err)
	for _, tt := range []struct {
		edit func(p *Partition)
		want string
	}{
		{func(p *Partition) { p.Kubelet.CgroupRoot = "/kubepods" }, `partition node0: kubelet cgroupRoot "/kubepods" must be "/node0"`},
		{func(p *Partition) { p.Kubelet.CPUManagerPolicyOptions = map[string]string{"full-pcpus-only": "true"} }, "partition node0: cpuManagerPolicyOptions strict-cpu-reservation"},
		{func(p *Partition) { p.Kubelet.CPUManagerPolicyOptions["strict-cpu-reservation"] = "false" }, "strict-cpu-reservation \"false\""},
		{func(p *Partition) { p.Runtime.Endpoint = "" }, `key "runtime.endpoint": "" is not a unix socket endpoint`},
		{func(p *Partition) { p.Kubelet.Port = 70000 }, "outside 1-65535"},
		{func(p *Partition) { p.Kubelet.HealthzPort = 2379 }, "2379, the port of etcd"},
		{func(p *Partition) { p.Allocator.MetricsPort = 65536 }, `partition node0 gets port 65536, outside 1-65535`},
	} {
		p, err := ParsePlan("plan.json", data)
		require.NoError(t, err)
		require.NoError(t, CheckPlanFile(p), "the plan as planned")
		require.Equal(t, "static", p.Partitions[0].Kubelet.CPUManagerPolicy, "the seed plan's policy: the strict rule applies")
		tt.edit(&p.Partitions[0])
		require.ErrorContains(t, CheckPlanFile(p), tt.want)
	}
}
