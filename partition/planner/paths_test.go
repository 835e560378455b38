package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// Every value that render or apply would refuse is refused by the plan,
// with its key and line (issue: about 20 such configs passed plan).
func TestPlanRefusesWhatRenderCannotCarry(t *testing.T) {
	for _, c := range []struct{ name, config, want string }{
		{"newline in a path (YAML injection)", "[kubelet]\nstatic_pod_path = \"/etc/kubernetes/manifests-{partition}\\nfoo: bar\"",
			`config.toml:2: key "kubelet.static_pod_path": "/etc/kubernetes/manifests-node0\nfoo: bar" has characters unit files and command lines cannot carry unquoted`},
		{"space in a binary", "[kubelet]\nbinary = \"/usr/bin/my kubelet\"", `config.toml:2: key "kubelet.binary": "/usr/bin/my kubelet" has characters`},
		{"quote in a kubeconfig", "[kubelet]\nkubeconfig = \"/etc/kubernetes/k\\\"{partition}.conf\"", `key "kubelet.kubeconfig": "/etc/kubernetes/k\"node0.conf" has characters`},
		{"systemd specifier", "[kubelet]\ncert_dir = \"/var/lib/pki-%i-{partition}\"", `key "kubelet.cert_dir": "/var/lib/pki-%i-node0" has characters`},
		{"non-ASCII", "[kubelet]\nroot_dir = \"/var/lib/kübelet-{partition}\"", `key "kubelet.root_dir": "/var/lib/kübelet-node0" has characters`},
		{"dot-dot", "[kubelet]\npod_logs_dir = \"/var/log/../../{partition}\"", `key "kubelet.pod_logs_dir": "/var/log/../../node0" is not a clean path (no '..', '.', '//' or trailing '/'): write "/node0"`},
		{"trailing slash", "[runtime]\nroot_dir = \"/var/lib/containerd-{partition}/\"", `key "runtime.root_dir": "/var/lib/containerd-node0/" is not a clean path`},
		{"over the tool's own config", "[runtime]\nconfig_path = \"/etc/numa-partition/config.toml\"", `key "runtime.config_path": "/etc/numa-partition/config.toml" is one of numa-partition's own files`},
		{"over a system file", "[kubelet]\nconfig_path = \"/etc/passwd\"", `key "kubelet.config_path": "/etc/passwd" is outside the directories such files belong in (/etc/numa-partition, /etc/kubernetes, /etc/containerd, /var/lib)`},
		{"into systemd's units", "[kubelet]\nconfig_path = \"/etc/systemd/system/sshd-{partition}.service\"", `key "kubelet.config_path": "/etc/systemd/system/sshd-node0.service" lies under /etc/systemd, which belongs to the system`},
		{"a system directory as a root dir", "[[partition]]\nnodes = [0]\n[kubelet]\nroot_dir = \"/var/lib\"", `key "kubelet.root_dir": "/var/lib" is a system directory, which a partition cannot own`},
		{"a socket outside /run", "[allocator]\nsocket = \"/var/lib/alloc-{partition}.sock\"", `key "allocator.socket": "/var/lib/alloc-node0.sock" is not in a directory below /run/, which systemd's RuntimeDirectory= makes`},
		{"an endpoint with a space", "[runtime]\nendpoint = \"unix:///run/c {partition}.sock\"", `key "runtime.endpoint": "/run/c node0.sock" has characters`},
		{"an argument with a space", "[kubelet]\nextra_args = [\"--v=2 --x\"]", `key "kubelet.extra_args": argument "--v=2 --x" has characters a unit's command line cannot carry unquoted`},
		{"too many arguments", "[kubelet]\nextra_args = [" + strings.Repeat(`"--v=2",`, 300) + "]", `key "kubelet.extra_args": has 300 arguments, more than 256`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := planErr(t, seedSpec, c.config)
			assert.Contains(t, got, c.want)
		})
	}
}

// The decoder leaves a table empty when the file has another type there;
// Parse says so.
func TestParseRefusesANonTableForATable(t *testing.T) {
	for text, want := range map[string]string{
		"[kubelet]\nlabels = \"x\"":                                  `config.toml:2: key "kubelet.labels": must be a table like { key = "value" }, not a string`,
		"[[partition]]\nnodes = [0]\ncpu_manager_policy_options = 3": `config.toml:3: key "partition.cpu_manager_policy_options": must be a table like { key = "value" }, not an integer`,
		"[host]\nreserved_memory = [\"1Gi\"]":                        `key "host.reserved_memory": must be a table`,
	} {
		_, err := config.Parse("config.toml", []byte(text))
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want)
	}
}

func TestConfigSizeLimit(t *testing.T) {
	_, err := config.Parse("big.toml", []byte("# "+strings.Repeat("x", config.MaxConfigBytes)+"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "big.toml: the config is 1048579 bytes; the most numa-partition reads is 1048576 (1 MiB)")
}

// Issue 24 item 4: root_dir = "/var/lib/kubelet:{partition}" planned and
// rendered, and systemd read the ':' as BindPaths='s separator, dropping
// the device-plugins bind. One path rule (validation.PathProblem, used by plan and
// render) refuses ':', spaces, '%' and '\' in paths; an argument may
// still hold a ':'.
func TestPathsRefuseWhatSystemdSplits_Issue24Item4(t *testing.T) {
	got := planErr(t, seedSpec, "[kubelet]\nroot_dir = \"/var/lib/kubelet:{partition}\"")
	assert.Contains(t, got, `config.toml:2: key "kubelet.root_dir": "/var/lib/kubelet:node0" has characters unit files and command lines cannot carry unquoted or read as separators; allowed are letters, digits and ._-/+@=, (no spaces, newlines, ':', quotes, '%', '\' or non-ASCII)`)
	for _, p := range []string{"/var/lib/a:b", "/var/lib/a b", "/var/lib/a%i", `/var/lib/a\b`} {
		assert.Contains(t, validation.PathProblem(p), "has characters", p)
	}
	assert.Empty(t, validation.ArgProblem("--foo=a:b"))
	p := mustPlan(t, seedSpec, "[kubelet]\nextra_args = [\"--feature-gates=A=true\", \"--tls-cipher-suites=a:b\"]")
	assert.Equal(t, "--tls-cipher-suites=a:b", p.Partitions[0].Kubelet.ExtraArgs[1])
}

// Issue 24 item 9: paths that collide inside one partition, or lie inside
// another partition's own directory, were planned: kubeconfig =
// config_path (kubelet overwrites its config), the allocator socket =
// containerd's socket or its NRI socket, cert_dir inside another
// partition's root dir.
func TestPlanRefusesCollidingPaths_Issue24Item9(t *testing.T) {
	for _, c := range []struct{ name, config, want string }{
		{"kubeconfig is the kubelet config", "[kubelet]\nkubeconfig = \"/etc/numa-partition/kubelet-{partition}.yaml\"",
			`config.toml:2: key "kubelet.kubeconfig": partition node0 gets /etc/numa-partition/kubelet-node0.yaml for both kubelet.config_path and kubelet.kubeconfig; give each its own path`},
		{"allocator socket is containerd's", "[allocator]\nsocket = \"/run/containerd-{partition}/containerd.sock\"",
			`config.toml:2: key "allocator.socket": partition node0 gets /run/containerd-node0/containerd.sock for both runtime.endpoint and allocator.socket; give each its own path`},
		{"allocator socket is the NRI socket", "[allocator]\nsocket = \"/run/containerd-{partition}/nri.sock\"",
			`config.toml:2: key "allocator.socket": partition node0 gets /run/containerd-node0/nri.sock for both runtime.state_dir and allocator.socket; give each its own path`},
		{"cert dir in another partition's root dir", "[kubelet]\ncert_dir = \"/var/lib/kubelet-node0/pki-{partition}\"",
			`config.toml:2: key "kubelet.cert_dir": partition node1 gets /var/lib/kubelet-node0/pki-node1, inside /var/lib/kubelet-node0, the kubelet.root_dir of partition node0; give each partition its own tree`},
		{"one partition's file is another's", "[kubelet]\nconfig_path = \"/etc/numa-partition/k-{partition}.yaml\"\n[runtime]\nconfig_path = \"/etc/numa-partition/k-node{index}x.yaml\"\n" +
			"[[partition]]\nnodes = [0]\nname = \"node1x\"\n[[partition]]\nnodes = [1]\nname = \"node0\"",
			`config.toml:4: key "runtime.config_path": partition node0 gets /etc/numa-partition/k-node1x.yaml, already the kubelet.config_path of partition node1x; give each its own path`},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Contains(t, planErr(t, seedSpec, c.config), c.want)
		})
	}
	// The defaults nest a partition's own directories in its root dir,
	// which is no collision.
	p := mustPlan(t, seedSpec, "")
	assert.Equal(t, "/var/lib/kubelet-node0/pki", p.Partitions[0].Kubelet.CertDir)
}

// Issue 24 item 8: configs that planned but render refused. Each is now
// refused by the plan, at its key, by the rule render uses.
func TestPlanRefusesWhatRenderRefused_Issue24Item8(t *testing.T) {
	var labels strings.Builder
	labels.WriteString("[kubelet.labels]\n")
	for i := range 20000 {
		fmt.Fprintf(&labels, "\"example.com/l%d\" = \"v\"\n", i)
	}
	for _, c := range []struct{ name, config, want string }{
		{"name \"0\"", "[[partition]]\nnodes = [0]\nname = \"0\"",
			`config.toml:3: key "partition[0].name": partition name "0" is not a valid slice name part (allowed: 1-32 of a-z, 0-9, starting with a letter)`},
		{"name \"1a\"", "[[partition]]\nnodes = [0]\nname = \"1a\"", `partition name "1a" is not a valid slice name part`},
		{"every node excluded", "[partitioning]\nexclude_nodes = \"0-1\"",
			`config.toml:2: key "partitioning.exclude_nodes": leaves no partition: every NUMA node with CPUs is excluded or in no group (nothing would run pods); keep at least one`},
		{"containerd's config is kubelet's", "[runtime]\nconfig_path = \"/etc/numa-partition/kubelet-{partition}.yaml\"",
			`config.toml:2: key "runtime.config_path": partition node0 gets /etc/numa-partition/kubelet-node0.yaml for both kubelet.config_path and runtime.config_path; give each its own path`},
		{"20,000 labels", labels.String(),
			`config.toml:1: key "kubelet.labels": partition node0 has 20003 labels, which make kubelet's --node-labels argument 408976 bytes long, more than 4096; use fewer or shorter labels`},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Contains(t, planErr(t, seedSpec, c.config), c.want)
		})
	}
	assert.Equal(t, "--node-labels=a=1,b=2", NodeLabelsArg(map[string]string{"b": "2", "a": "1"}))
	assert.Empty(t, NodeLabelsArg(nil))
}

// Issue 38 item 2: only the configured paths were checked, not what the
// tool derives from them. node_dirs = ["/etc/numa"] with a partition
// named "partition" bound the host's /etc/numa-partition into the
// partition's namespace (BindPaths=/etc/numa-partition:/etc/numa), and
// /var/lib/numa and /run/numa reached the record, the checkpoints, the
// sockets and the lock. Every derived path is now checked against the
// tool's own files and directories, at its key and line.
func TestPlanRefusesDerivedPathsOnTheToolsOwn_Issue38Item2(t *testing.T) {
	named := func(name string) string { return "\n[[partition]]\nnodes = [0]\nname = \"" + name + "\"" }
	for _, c := range []struct{ name, config, want string }{
		{"node dir source is the config dir", "[network]\nnode_dirs = [\"/etc/numa\"]" + named("partition"),
			`config.toml:2: key "network.node_dirs": "/etc/numa-partition" is partition partition's directory for "/etc/numa" (the path with "-partition" appended), which is or holds /etc/numa-partition`},
		{"node dir source is the state dir", "[network]\nnode_dirs = [\"/var/lib/numa\"]" + named("partition"),
			`config.toml:2: key "network.node_dirs": "/var/lib/numa-partition" is partition partition's directory for "/var/lib/numa"`},
		{"node dir source is the run dir", "[network]\nnode_dirs = [\"/run/numa\"]" + named("partition"),
			`config.toml:2: key "network.node_dirs": "/run/numa-partition" is partition partition's directory for "/run/numa"`},
		{"root dir template is the state dir", "[kubelet]\nroot_dir = \"/var/lib/numa-{partition}\"" + named("partition"),
			`config.toml:2: key "kubelet.root_dir": "/var/lib/numa-partition" is or holds /var/lib/numa-partition, numa-partition's own directory`},
		{"allocator state dir is the kept originals", named("originals"),
			`key "allocator.state_dir": "/var/lib/numa-partition/originals" is one of numa-partition's own files and directories`},
		{"allocator socket is the lock", "[allocator]\nsocket = \"/run/numa-partition/{partition}.lock\"" + named("apply"),
			`config.toml:2: key "allocator.socket": "/run/numa-partition/apply.lock" is one of numa-partition's own files and directories`},
		{"allocator socket in the network state", "[allocator]\nsocket = \"/run/numa-partition/{partition}/a.sock\"" + named("network"),
			`config.toml:2: key "allocator.socket": "/run/numa-partition/network/a.sock" lies in /run/numa-partition/network, one of numa-partition's own files and directories`},
		{"containerd state in the run dir", "[runtime]\nstate_dir = \"/run/numa-partition/c-{partition}\"",
			`config.toml:2: key "runtime.state_dir": "/run/numa-partition/c-node0" lies in /run/numa-partition, numa-partition's own directory, which holds only the allocators' sockets`},
		{"device plugins in the state dir", "[kubelet]\ndevice_plugins_dir = \"/var/lib/numa-partition/dp-{partition}\"",
			`config.toml:2: key "kubelet.device_plugins_dir": "/var/lib/numa-partition/dp-node0" lies in /var/lib/numa-partition, numa-partition's own directory, which holds only the allocators' state dirs`},
		{"a written file over a hugepage view", "[kubelet]\nkubeconfig = \"/etc/numa-partition/sysfs-{partition}\"",
			`config.toml:2: key "kubelet.kubeconfig": "/etc/numa-partition/sysfs-node0" lies where numa-partition writes the partitions' hugepage views`},
		{"node dir source is the partition's root dir", "[network]\nnode_dirs = [\"/var/lib/calico\"]\n[kubelet]\nroot_dir = \"/var/lib/calico-{partition}\"",
			`config.toml:2: key "network.node_dirs": partition node0 gets /var/lib/calico-node0 for both kubelet.root_dir and network.node_dirs; give each its own path`},
		{"node dir source is another partition's root dir", "[network]\nnode_dirs = [\"/var/lib/calico\"]\n[runtime]\nroot_dir = \"/var/lib/calico-node{index}x\"" + named("node1x") + "\n[[partition]]\nnodes = [1]\nname = \"node0\"",
			`config.toml:4: key "runtime.root_dir": partition node0 gets /var/lib/calico-node1x, already the network.node_dirs of partition node1x; give each its own path`},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Contains(t, planErr(t, seedSpec, c.config), c.want)
		})
	}
}
