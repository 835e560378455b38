package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

func TestParseFullConfig(t *testing.T) {
	c, err := Parse("config.toml", []byte(`
[partitioning]
mode = "custom"
groups = [[0, 1], "2-3"]
exclude_nodes = "250-255"

[host]
reserved_cpus = "0,4"
memory_nodes = [0]
reserved_memory = { 0 = "1100Mi" }

[[host.hugepages]]
size = "1Gi"
count = 4
nodes = [0, 2]

[kubelet]
hostname = "h"
port = 11250
max_pods = 50
labels = { "example.com/a" = "b" }

[runtime]
mode = "shared"
endpoint = "unix:///run/containerd/containerd.sock"

[[partition]]
nodes = [2]
name = "fast"
`))
	require.NoError(t, err)
	assert.Equal(t, ModeCustom, c.Partitioning.Mode)
	assert.Equal(t, []NodeList{Nodes(0, 1), Nodes(2, 3)}, c.Partitioning.Groups)
	assert.Equal(t, "250-255", c.Partitioning.ExcludeNodes.Nodes.String())
	assert.Equal(t, "0,4", c.Host.ReservedCPUs)
	assert.Equal(t, Nodes(0), c.Host.MemoryNodes)
	assert.Equal(t, map[string]string{"0": "1100Mi"}, c.Host.ReservedMemory)
	assert.Equal(t, []HugepagesConfig{{Size: "1Gi", Count: 4, Nodes: Nodes(0, 2)}}, c.Host.Hugepages)
	assert.Equal(t, 11250, *c.Kubelet.Port)
	assert.Nil(t, c.Kubelet.HealthzPort)
	assert.Equal(t, 50, *c.Kubelet.MaxPods)
	assert.Equal(t, "fast", c.Partitions[0].Name)
	assert.Equal(t, "config.toml", c.File())
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"unknown keys with lines and what is allowed", "[host]\nreserved_cpu = \"0\"\n[kubelet]\nport = 1\nprot = 2\n",
			`config.toml:2: key "host.reserved_cpu": unknown key; allowed here: hugepages, memory_nodes, reserved_cpus, reserved_ephemeral_storage, reserved_memory, reserved_pids` + "\n" +
				`config.toml:5: key "kubelet.prot": unknown key; allowed here: binary, bootstrap_kubeconfig, cert_dir, cluster_dns, cluster_domain, config_path, cpu_manager_policy, cpu_manager_policy_options, device_plugins_dir, ephemeral_storage, eviction_hard_memory, extra_args, healthz_port, hostname, kube_reserved_memory, kubeconfig, labels, max_pods, memory_manager_policy, node_name, pids, pod_logs_dir, port, port_stride, read_only_port, root_dir, static_pod_path, system_reserved_memory, taints, topology_manager_options, topology_manager_policy, topology_manager_scope`},
		{"unknown table", "[hosts]\nx = 1\n",
			`config.toml:1: key "hosts": unknown key; allowed here: allocator, host, kubelet, network, partition, partitioning, runtime` + "\n" +
				`config.toml:2: key "hosts.x": unknown key; allowed here: (none)`},
		{"unknown key in an array of tables", "[[partition]]\nnodes = [0]\n[[partition]]\nnodes = [1]\nlables = {}\n",
			`config.toml:5: key "partition.lables": unknown key; allowed here: address, allocator_mode, cpu_manager_policy, cpu_manager_policy_options, ephemeral_storage, eviction_hard_memory, extra_args, kube_reserved_memory, labels, max_pods, memory_manager_policy, name, node_name, nodes, pids, system_reserved_memory, taints, topology_manager_options, topology_manager_policy, topology_manager_scope`},
		{"syntax error", "[host]\nreserved_cpus = \"0\n",
			`config.toml:2: key "host.reserved_cpus": strings cannot contain newlines`},
		{"wrong type", "[kubelet]\nmax_pods = \"many\"\n",
			`config.toml:2: key "kubelet.max_pods": incompatible types: TOML value has type string; destination has type integer`},
		{"bad node list", "[partitioning]\nexclude_nodes = [\"a\"]\n",
			`config.toml:2: key "partitioning.exclude_nodes": node list: a is not a node id (allowed: integers 0-1023, or a string like "0-3,8")`},
		{"bad node list string", "[partitioning]\nexclude_nodes = \"0-\"\n",
			`config.toml:2: key "partitioning.exclude_nodes": node list "0-": ` + nodeListErr(t, "0-")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.toml", []byte(tt.text))
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func nodeListErr(t *testing.T, s string) string {
	t.Helper()
	_, err := bitmask.ParseNodeList(s)
	require.Error(t, err)
	return err.Error()
}

func TestSourceLines(t *testing.T) {
	src := newSource("c.toml", `# comment
[kubelet]
port = 1 # [not.a.table]
labels = { a = "b",
  c = "d" }
extra_args = [
  "--v=2",
  "x = 1",
]
"quoted.key" = 1
text = """
[fake]
y = 2
"""
[[partition]]
name = "a"
[[partition]]
name = "b"
[ host . hugepages ]
`)
	for key, line := range map[string]int{
		"kubelet":            2,
		"kubelet.port":       3,
		"kubelet.labels":     4,
		"kubelet.labels.c":   4, // found through its table
		"kubelet.extra_args": 6,
		"kubelet.quoted.key": 10,
		"kubelet.text":       11,
		"fake":               0,
		"kubelet.y":          2, // inside a string: falls back to the table
		"partition[0].name":  16,
		"partition[1].name":  18,
		"partition.name":     16,
		"host.hugepages":     19,
		"runtime.mode":       0,
		"kubelet.x":          2,
	} {
		assert.Equal(t, line, src.line(key), key)
	}
}
