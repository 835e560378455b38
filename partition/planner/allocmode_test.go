package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

func TestAllocatorModes(t *testing.T) {
	t.Run("nri: the allocator takes the topology policy, kubelet's managers are off", func(t *testing.T) {
		p, err := NewPlan(synth(seedSpec), mustParse(t, `
[kubelet]
hostname = "h"
topology_manager_policy = "single-numa-node"
topology_manager_scope = "pod"
topology_manager_options = { "prefer-closest-numa-nodes" = "true" }
[[partition]]
nodes = [1]
allocator_mode = "nri"
`))
		require.NoError(t, err)
		kubelet, nri := p.Partitions[0], p.Partitions[1]
		assert.Equal(t, config.AllocatorModeKubelet, kubelet.Allocator.Mode)
		assert.Equal(t, "single-numa-node", kubelet.Kubelet.TopologyManagerPolicy)
		assert.Equal(t, "static", kubelet.Kubelet.CPUManagerPolicy)

		assert.Equal(t, Allocator{Socket: "/run/numa-partition/node1.sock", StateDir: "/var/lib/numa-partition/node1", MetricsPort: config.DefaultMetricsPort,
			Mode: config.AllocatorModeNRI, NRISocket: "/run/containerd-node1/nri.sock", NRIPlugin: "numa-partition-node1", TopologyPolicy: "single-numa-node", TopologyScope: "pod",
			TopologyOptions: map[string]string{"prefer-closest-numa-nodes": "true"}}, nri.Allocator)
		k := nri.Kubelet
		assert.Equal(t, []string{"none", "None", "none"}, []string{k.CPUManagerPolicy, k.MemoryManagerPolicy, k.TopologyManagerPolicy})
		assert.Nil(t, k.CPUManagerPolicyOptions, "CPU manager options need the static policy")
		assert.Nil(t, k.TopologyManagerOptions)
	})
	t.Run("auto is kubelet up to 8 nodes, nri beyond", func(t *testing.T) {
		p, err := NewPlan(synth(spec{sockets: 1, nodesPerSocket: 9, coresPerNode: 2, threads: 1}), mustParse(t, "[kubelet]\nhostname = \"h\"\n"))
		require.NoError(t, err)
		require.Len(t, p.Partitions, 1)
		assert.Equal(t, config.AllocatorModeNRI, p.Partitions[0].Allocator.Mode)
		p, err = NewPlan(synth(seedSpec), mustParse(t, "[kubelet]\nhostname = \"h\"\n"))
		require.NoError(t, err)
		assert.Equal(t, config.AllocatorModeKubelet, p.Partitions[0].Allocator.Mode)
	})
	t.Run("errors", func(t *testing.T) {
		_, err := NewPlan(synth(seedSpec), mustParse(t, "[kubelet]\nhostname = \"h\"\n[allocator]\nmode = \"fast\"\n"))
		assert.ErrorContains(t, err, `config.toml:4: key "allocator.mode": "fast": allowed are "auto", "kubelet" and "nri"`)
		_, err = NewPlan(synth(seedSpec), mustParse(t, "[kubelet]\nhostname = \"h\"\n[allocator]\nmode = \"nri\"\n[runtime]\nmode = \"shared\"\nendpoint = \"unix:///run/containerd/containerd.sock\"\n"))
		assert.ErrorContains(t, err, "nri mode plugs into the partition's own containerd")
	})
}
