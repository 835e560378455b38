package planner

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// checkInvariants are the plan's promises, whatever the machine.
func checkInvariants(t require.TestingT, topo *numa.Topology, p *Plan) {
	online := newMachine(topo).online
	seen := p.Host.ReservedCPUs.Intersect(online)
	var nodes bitmask.NodeSet = p.Host.ExcludedNodes
	var memNodes bitmask.NodeSet
	ports := map[int]string{}
	names := map[string]bool{}
	for _, part := range p.Partitions {
		// Every online CPU is the host's or exactly one partition's.
		require.True(t, part.CPUs.IsSubsetOf(online), "partition %s CPUs %s are online", part.Name, part.CPUs)
		require.False(t, part.CPUs.Intersects(seen), "partition %s CPUs %s are nobody else's", part.Name, part.CPUs)
		seen = seen.Union(part.CPUs)
		require.True(t, part.HostReservedCPUs.IsSubsetOf(p.Host.ReservedCPUs))

		require.True(t, nodes.Intersect(part.Nodes).IsEmpty(), "nodes %s in one partition only", part.Nodes)
		nodes = nodes.Union(part.Nodes)
		require.True(t, memNodes.Intersect(part.MemoryNodes).IsEmpty(), "memory nodes %s disjoint", part.MemoryNodes)
		require.True(t, part.MemoryNodes.IsSubsetOf(part.Nodes))
		memNodes = memNodes.Union(part.MemoryNodes)

		if part.Network != nil {
			// In a namespace of its own a partition takes the standard
			// ports; what must be unique is its address.
			a := part.Network.Address.String()
			require.False(t, names["address "+a], "address %s of %s unique", a, part.Name)
			names["address "+a] = true
			require.True(t, p.Network.Subnet.Contains(part.Network.Address.Addr()), "address %s in subnet %s", a, p.Network.Subnet)
		}
		for _, port := range []int{part.Kubelet.Port, part.Kubelet.HealthzPort, part.Kubelet.ReadOnlyPort} {
			if port == 0 || part.Network != nil {
				continue
			}
			_, dup := ports[port]
			require.False(t, dup, "port %d of %s unique (also %s)", port, part.Name, ports[port])
			ports[port] = part.Name
		}
		require.False(t, names[part.Name], "name %s unique", part.Name)
		names[part.Name] = true
		require.Empty(t, validation.NameProblem(part.Name))

		var sum uint64
		for _, nm := range part.Memory {
			sum += nm.ReservedBytes
		}
		k := part.Kubelet
		require.Equal(t, k.KubeReservedMemory+k.SystemReservedMemory+k.EvictionHardMemory, sum, "Σ reserved of %s", part.Name)
	}
	require.Equal(t, online.String(), seen.String(), "every online CPU is planned")
	require.Equal(t, topo.NodeIDs(), nodes, "every node is in a partition or excluded")
}

// machineGen draws machines of the shapes real hosts have: 1-4 sockets,
// 1-4 nodes each, SMT or not, memory-only nodes, sparse ids, offline CPUs.
func machineGen(t *rapid.T) spec {
	s := spec{
		sockets:        rapid.IntRange(1, 4).Draw(t, "sockets"),
		nodesPerSocket: rapid.IntRange(1, 4).Draw(t, "nodesPerSocket"),
		coresPerNode:   rapid.IntRange(2, 6).Draw(t, "coresPerNode"),
		threads:        rapid.IntRange(1, 2).Draw(t, "threads"),
		memOnly:        rapid.IntRange(0, 3).Draw(t, "memOnly"),
	}
	cpuNodes := s.sockets * s.nodesPerSocket
	for k := 0; k < s.memOnly; k++ {
		s.near = append(s.near, rapid.IntRange(-1, cpuNodes-1).Draw(t, "near"))
	}
	if rapid.Bool().Draw(t, "sparse") {
		id := 0
		for k := 0; k < cpuNodes+s.memOnly; k++ {
			id += rapid.IntRange(1, 40).Draw(t, "gap")
			s.nodeIDs = append(s.nodeIDs, id)
		}
	}
	total := cpuNodes * s.coresPerNode * s.threads
	if rapid.Bool().Draw(t, "offline") {
		s.offline = rapid.SliceOfNDistinct(rapid.IntRange(0, total-1), 0, 3, rapid.ID[int]).Draw(t, "offlineCPUs")
	}
	return s
}

func configGen(t *rapid.T) *config.Config {
	c := &config.Config{Kubelet: config.KubeletConfig{Hostname: "h"}}
	c.Partitioning.Mode = rapid.SampledFrom([]string{"", config.ModeSocket, config.ModeNode}).Draw(t, "mode")
	stride := rapid.IntRange(3, 20).Draw(t, "stride")
	c.Kubelet.PortStride = &stride
	if rapid.Bool().Draw(t, "readOnly") {
		ro := 10255
		c.Kubelet.ReadOnlyPort = &ro
	}
	return c
}

func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := machineGen(t)
		topo := synth(s)
		c := configGen(t)
		p, err := NewPlan(topo, c)
		if err != nil {
			// Only these rules may refuse a generated machine: a machine
			// too small for host and partitions once CPUs are offline, or
			// strides hitting a well-known port.
			for _, e := range err.(config.Errors) {
				switch e.Key {
				case "kubelet.port", "kubelet.healthz_port", "kubelet.read_only_port", "", keyReservedCPUs:
				default:
					t.Fatalf("unexpected error on %+v: %v", s, err)
				}
			}
			return
		}
		checkInvariants(t, topo, p)

		again, err := NewPlan(synth(s), c)
		require.NoError(t, err)
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(again)
		require.Equal(t, string(a), string(b), "deterministic")
	})
}

// With the seed shape scaled up, the default plan always succeeds.
func TestPlanPropertiesDefaultsAlwaysPlan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := machineGen(t)
		s.offline = nil
		p, err := NewPlan(synth(s), &config.Config{Kubelet: config.KubeletConfig{Hostname: "h"}})
		require.NoError(t, err, fmt.Sprintf("%+v", s))
		checkInvariants(t, synth(s), p)
		assert.Len(t, p.Partitions, s.sockets)
	})
}
