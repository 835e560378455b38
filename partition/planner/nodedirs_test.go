package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

func TestNodeDirsDefaultToWhereCNIAndLogAgentsWrite(t *testing.T) {
	p := mustPlan(t, seedSpec, "")
	for _, part := range p.Partitions {
		want := make([]NodeDir, len(config.DefaultNodeDirs))
		for i, d := range config.DefaultNodeDirs {
			want[i] = NodeDir{Path: d, Source: d + "-" + part.Name}
		}
		assert.Equal(t, want, part.NodeDirs)
		// Every kubelet writes to "/var/log/pods": the path is each
		// partition's own, so the plan does not call it shared.
		assert.Equal(t, "/var/log/pods", part.Kubelet.PodLogsDir)
	}
}

func TestNodeDirsFollowTheConfig(t *testing.T) {
	p := mustPlan(t, seedSpec, "[network]\nnode_dirs = [\"/var/lib/calico\"]\n[kubelet]\npod_logs_dir = \"/var/log/pods-{partition}\"")
	assert.Equal(t, []NodeDir{{Path: "/var/lib/calico", Source: "/var/lib/calico-node1"}}, p.Partitions[1].NodeDirs)
	assert.Equal(t, "/var/log/pods-node1", p.Partitions[1].Kubelet.PodLogsDir, "without /var/log/pods a node dir, kubelet writes to the host's path")

	off := mustPlan(t, seedSpec, "[network]\nnode_dirs = []")
	assert.Empty(t, off.Partitions[0].NodeDirs)
	assert.Equal(t, "/var/log/pods-node0", off.Partitions[0].Kubelet.PodLogsDir)

	host := mustPlan(t, seedSpec, "[network]\nmode = \"host\"")
	assert.Empty(t, host.Partitions[0].NodeDirs, "in host mode partitions share the host's directories")
	assert.Equal(t, "/var/log/pods-node0", host.Partitions[0].Kubelet.PodLogsDir)
}

func TestNodeDirsRefusals(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{`node_dirs = ["/opt/cni/bin"]`, `"/opt/cni/bin" is not below /etc, /run, /var/lib, /var/log, /var/cache, where systemd makes a partition's own copy before binding it`},
		{`node_dirs = ["/run/a:b"]`, `"/run/a:b" has characters unit files and command lines cannot carry unquoted or read as separators`},
		{`node_dirs = ["run/flannel"]`, `"run/flannel" is not an absolute path`},
		{`node_dirs = ["/var/lib/kubelet/plugins"]`, `"/var/lib/kubelet/plugins" is or holds /var/lib/kubelet`},
		{`node_dirs = ["/etc"]`, `"/etc" is not below /etc`},
		{`node_dirs = ["/var/lib/numa-partition"]`, `is or holds /var/lib/numa-partition`},
		{`node_dirs = ["/run/flannel", "/run/flannel/x"]`, `"/run/flannel" and "/run/flannel/x" overlap: list each directory once, and none inside another`},
		{`node_dirs = ["/run/flannel", "/run/flannel"]`, `"/run/flannel" and "/run/flannel" overlap`},
		{`node_dirs = ["/var/log/pods", "/var/log/pods-node0"]`, `"/var/log/pods-node0" is partition node0's directory for "/var/log/pods", which overlaps the node dir "/var/log/pods-node0"`},
		{"mode = \"host\"\nnode_dirs = [\"/run/flannel\"]", `key "network.node_dirs": is set, but network.mode = "host"`},
	} {
		t.Run(tc.config, func(t *testing.T) {
			msg := planErr(t, seedSpec, "[network]\n"+tc.config)
			assert.Contains(t, msg, "network.node_dirs")
			assert.Contains(t, msg, tc.want)
		})
	}
}
