package planner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// Issue 27: the plan carried the allocator's metrics port as the string
// "127.0.0.1:PORT" that validate and render parsed back. It is a number,
// decided once: base + index × stride, checked with the other ports.
func TestMetricsPortIsANumber_Issue27(t *testing.T) {
	p := mustPlan(t, seedSpec, "[network]\nmode = \"host\"\n[allocator]\nmetrics_port = 9400")
	assert.Equal(t, 9400, p.Partitions[0].Allocator.MetricsPort)
	assert.Equal(t, 9410, p.Partitions[1].Allocator.MetricsPort)
	data, err := json.Marshal(p.Partitions[1].Allocator)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"metricsPort":9410`)
	assert.NotContains(t, string(data), "metricsAddr")

	// 0 turns metrics off: no field.
	p = mustPlan(t, seedSpec, "[allocator]\nmetrics_port = 0")
	assert.Zero(t, p.Partitions[0].Allocator.MetricsPort)
	data, err = json.Marshal(p.Partitions[0].Allocator)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "metricsPort")

	// Checked with the kubelet ports: partition 1's metrics port is
	// partition 0's kubelet port.
	assert.Contains(t, planErr(t, seedSpec, "[network]\nmode = \"host\"\n[allocator]\nmetrics_port = 10240"),
		`key "allocator.metrics_port": metrics_port of partition node1 is 10250, already the port of partition node0 (key kubelet.port)`)
}

// Issue 27: render refused a plan file's metrics address by rules of its
// own ("port must be 1-65535") and took its kubelet ports unchecked, so a
// plan file could carry ports the planner refuses in a config (70000,
// one port twice on the host, etcd's). CheckPorts checks a plan
// file's ports with the planner's rules.
func TestCheckPorts_Issue27(t *testing.T) {
	host := func() *Plan {
		return mustPlan(t, seedSpec, "[network]\nmode = \"host\"\n[kubelet]\nread_only_port = 10255\n[allocator]\nmetrics_port = 9400")
	}
	require.NoError(t, CheckPorts(host()))
	for name, c := range map[string]struct {
		edit func(p *Plan)
		want string
	}{
		"kubelet port past 65535": {func(p *Plan) { p.Partitions[1].Kubelet.Port = 70000 },
			`key "kubelet.port": partition node1 gets port 70000, outside 1-65535`},
		"kubelet port 0": {func(p *Plan) { p.Partitions[0].Kubelet.Port = 0 },
			`key "kubelet.port": partition node0 gets port 0, outside 1-65535`},
		"negative read-only port": {func(p *Plan) { p.Partitions[0].Kubelet.ReadOnlyPort = -1 },
			`key "kubelet.read_only_port": partition node0 gets port -1, outside 1-65535`},
		"metrics port past 65535": {func(p *Plan) { p.Partitions[0].Allocator.MetricsPort = 65536 },
			`key "allocator.metrics_port": partition node0 gets port 65536, outside 1-65535`},
		"negative metrics port": {func(p *Plan) { p.Partitions[0].Allocator.MetricsPort = -9400 },
			`key "allocator.metrics_port": partition node0 gets port -9400, outside 1-65535`},
		"metrics port is another partition's kubelet port": {func(p *Plan) { p.Partitions[1].Allocator.MetricsPort = p.Partitions[0].Kubelet.Port },
			`key "allocator.metrics_port": metrics_port of partition node1 is 10250, already the port of partition node0 (key kubelet.port)`},
		"healthz port twice": {func(p *Plan) { p.Partitions[1].Kubelet.HealthzPort = p.Partitions[0].Kubelet.HealthzPort },
			`key "kubelet.healthz_port": healthz_port of partition node1 is 10248, already the healthz_port of partition node0 (key kubelet.healthz_port)`},
		"etcd's port": {func(p *Plan) { p.Partitions[0].Allocator.MetricsPort = 2379 },
			`key "allocator.metrics_port": metrics_port of partition node0 is 2379, the port of etcd client`},
	} {
		t.Run(name, func(t *testing.T) {
			p := host()
			c.edit(p)
			err := CheckPorts(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// In namespaces of their own, partitions listen on the same ports.
	p := mustPlan(t, seedSpec, "[allocator]\nmetrics_port = 9400")
	require.NotNil(t, p.Partitions[1].Network)
	assert.Equal(t, p.Partitions[0].Allocator.MetricsPort, p.Partitions[1].Allocator.MetricsPort)
	require.NoError(t, CheckPorts(p))
}

// Issue 27: a plan file written before metricsPort (plan -o json, or a
// host's rendered plan.json, which its allocators read at every start)
// has metricsAddr "127.0.0.1:PORT". It is read as the port; anything
// else an old build could not have written, or both fields, is refused
// naming the field and saying to re-plan.
func TestParsePlanReadsTheOldMetricsAddr_Issue27(t *testing.T) {
	plan := mustPlan(t, seedSpec, "[network]\nmode = \"host\"\n[allocator]\nmetrics_port = 9400")
	data, err := json.MarshalIndent(plan, "", "  ")
	require.NoError(t, err)
	old := strings.Replace(strings.Replace(string(data), `"metricsPort": 9400`, `"metricsAddr": "127.0.0.1:9400"`, 1), `"metricsPort": 9410`, `"metricsAddr": "127.0.0.1:9410"`, 1)
	require.NotContains(t, old, "metricsPort")
	got, err := ParsePlan("plan.json", []byte(old))
	require.NoError(t, err)
	assert.Equal(t, plan, got)

	for name, c := range map[string]struct{ from, to, want string }{
		"not loopback 127.0.0.1": {`"metricsPort": 9400`, `"metricsAddr": "localhost:9400"`,
			`plan.json: partitions[0].allocator.metricsAddr "localhost:9400": this build reads the field builds before allocator.metricsPort wrote only as 127.0.0.1:PORT (PORT 1-65535); re-plan with this build`},
		"no port": {`"metricsPort": 9400`, `"metricsAddr": "127.0.0.1"`, `partitions[0].allocator.metricsAddr "127.0.0.1": this build reads`},
		"port 0":  {`"metricsPort": 9400`, `"metricsAddr": "127.0.0.1:0"`, `partitions[0].allocator.metricsAddr "127.0.0.1:0": this build reads`},
		"both": {`"metricsPort": 9410`, `"metricsPort": 9410, "metricsAddr": "127.0.0.1:9410"`,
			`plan.json: partitions[1].allocator.metricsAddr "127.0.0.1:9410" beside metricsPort 9410: metricsAddr is what builds before metricsPort wrote; re-plan with this build`},
		"case-changed": {`"metricsPort": 9400`, `"MetricsAddr": "127.0.0.1:9400"`, `unknown field "partitions[0].allocator.MetricsAddr"`},
		"not a string": {`"metricsPort": 9400`, `"metricsAddr": 9400`, `unknown field "partitions[0].allocator.metricsAddr"`},
	} {
		t.Run(name, func(t *testing.T) {
			edited := strings.Replace(string(data), c.from, c.to, 1)
			require.NotEqual(t, string(data), edited, "the edit applies")
			_, err := ParsePlan("plan.json", []byte(edited))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// Issue 40: metrics are on by default, so that the cluster's Prometheus
// scrapes every partition: in namespace mode each partition's daemon on
// the same port at its own address, in host mode a port of its own per
// partition by the kubelet's stride, checked with the kubelet ports.
func TestMetricsOnByDefault_Issue40(t *testing.T) {
	p := mustPlan(t, seedSpec, "")
	require.Len(t, p.Partitions, 2)
	for _, part := range p.Partitions {
		require.NotNil(t, part.Network, "namespace mode by default")
		assert.Equal(t, config.DefaultMetricsPort, part.Allocator.MetricsPort, part.Name)
	}
	require.NoError(t, CheckPorts(p))

	p = mustPlan(t, seedSpec, "[network]\nmode = \"host\"")
	assert.Equal(t, config.DefaultMetricsPort, p.Partitions[0].Allocator.MetricsPort)
	assert.Equal(t, config.DefaultMetricsPort+config.DefaultPortStride, p.Partitions[1].Allocator.MetricsPort)
	require.NoError(t, CheckPorts(p))

	// The default meets the planner's port rules like a configured base:
	// a kubelet port on it is refused by the same check.
	assert.Contains(t, planErr(t, seedSpec, "[network]\nmode = \"host\"\n[kubelet]\nhealthz_port = 9474"),
		`metrics_port of partition node1 is 9474, already the healthz_port of partition node0 (key kubelet.healthz_port)`)
}
