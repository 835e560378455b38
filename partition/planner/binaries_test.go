package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// #37: one partition may run another kubelet and containerd (a canary)
// while the others keep [kubelet]'s and [runtime]'s.
func TestPartitionBinaries(t *testing.T) {
	p := mustPlan(t, seedSpec, `[kubelet]
binary = "/usr/local/bin/kubelet"

[[partition]]
nodes = [1]
kubelet_binary = "/opt/kubernetes/v1.37.3/kubelet"
containerd_binary = "/opt/containerd/v2.2.1/bin/containerd"
`)
	require.Len(t, p.Partitions, 2)
	assert.Equal(t, "/usr/local/bin/kubelet", p.Partitions[0].Kubelet.Binary)
	assert.Equal(t, config.DefaultContainerdBinary, p.Partitions[0].Runtime.Binary)
	assert.Equal(t, "/opt/kubernetes/v1.37.3/kubelet", p.Partitions[1].Kubelet.Binary)
	assert.Equal(t, "/opt/containerd/v2.2.1/bin/containerd", p.Partitions[1].Runtime.Binary)
}

// A partition's binary is checked as [kubelet]'s is, and the error names
// the partition's own key and line.
func TestPartitionBinariesRefused(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[[partition]]\nnodes = [1]\nkubelet_binary = \"kubelet\"\n", `config.toml:3: key "partition[0].kubelet_binary": "kubelet" is not an absolute path`},
		{"[[partition]]\nnodes = [1]\ncontainerd_binary = \"../containerd\"\n", `config.toml:3: key "partition[0].containerd_binary": "../containerd" is not an absolute path`},
		{"[runtime]\nmode = \"shared\"\nendpoint = \"unix:///run/containerd/containerd.sock\"\n\n[[partition]]\nnodes = [1]\ncontainerd_binary = \"/opt/containerd\"\n",
			`config.toml:7: key "partition[0].containerd_binary": names partition node1's own containerd, which runtime.mode = "shared" does not run`},
	} {
		c0 := mustParse(t, c.text)
		c0.Kubelet.Hostname = "h"
		_, err := NewPlan(synth(seedSpec), c0)
		require.Error(t, err, c.text)
		assert.Contains(t, err.Error(), c.want, c.text)
		assert.NotContains(t, err.Error(), "kubelet.binary", "the shared key is not blamed")
	}
}
