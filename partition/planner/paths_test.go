package planner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		_, err := Parse("config.toml", []byte(text))
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want)
	}
}

func TestConfigSizeLimit(t *testing.T) {
	_, err := Parse("big.toml", []byte("# "+strings.Repeat("x", maxConfigBytes)+"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "big.toml: the config is 1048579 bytes; the most numa-partition reads is 1048576 (1 MiB)")
}

func TestPathProblem(t *testing.T) {
	for p, want := range map[string]string{
		"/var/lib/kubelet-node0": "", "var/lib": "is not an absolute path", "/": "is the root directory",
		"/a//b": `is not a clean path (no '..', '.', '//' or trailing '/'): write "/a/b"`, "/a/./b": "is not a clean path",
		"/a\tb": "has characters", "/a$b": "has characters", "/a\\b": "has characters",
	} {
		if want == "" {
			assert.Empty(t, PathProblem(p), p)
		} else {
			assert.Contains(t, PathProblem(p), want, p)
		}
	}
	assert.Contains(t, ArgProblem(strings.Repeat("a", maxArgLength+1)), "more than 4096")
	assert.Equal(t, "is empty", ArgProblem(""))
}
