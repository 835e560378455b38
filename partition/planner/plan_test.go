package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

func mustParse(t *testing.T, text string) *config.Config {
	t.Helper()
	c, err := config.Parse("config.toml", []byte(text))
	require.NoError(t, err)
	return c
}

func mustPlan(t *testing.T, s spec, text string) *Plan {
	t.Helper()
	c := mustParse(t, text)
	if c.Kubelet.Hostname == "" {
		c.Kubelet.Hostname = "Host1"
	}
	p, err := NewPlan(synth(s), c)
	require.NoError(t, err)
	return p
}

// The seed recipe: 2 sockets × 4 cores, CPUs 0 and 4 for the host,
// node0.slice and node1.slice.
func TestPlanSeedMachine(t *testing.T) {
	p := mustPlan(t, seedSpec, "")
	assert.Equal(t, "host1", p.Hostname)
	assert.Equal(t, "0,4", p.Host.ReservedCPUs.String())
	assert.Equal(t, "0-1", p.Host.MemoryNodes.String())
	assert.Equal(t, "0-7", p.Host.OnlineCPUs.String())
	require.Len(t, p.Partitions, 2)

	want := []struct {
		name, slice, color, nodes, cpus, reserved, nodeName string
		port, healthz                                       int
	}{
		// Each in a network namespace of its own: kubelet's standard ports.
		{"node0", "node0.slice", "red", "0", "1-3", "0", "host1-node0", 10250, 10248},
		{"node1", "node1.slice", "blue", "1", "5-7", "4", "host1-node1", 10250, 10248},
	}
	for i, w := range want {
		got := p.Partitions[i]
		assert.Equal(t, i, got.Index)
		assert.Equal(t, w.name, got.Name)
		assert.Equal(t, w.slice, got.Slice)
		assert.Equal(t, w.color, got.Color)
		assert.Equal(t, w.nodes, got.Nodes.String())
		assert.Equal(t, w.nodes, got.MemoryNodes.String())
		assert.Equal(t, w.cpus, got.CPUs.String())
		assert.Equal(t, w.reserved, got.HostReservedCPUs.String())
		assert.Equal(t, w.nodeName, got.NodeName)
		assert.Equal(t, map[string]string{"numa-type": w.color, "numa-partition.io/partition": w.name, "numa-partition.io/host": "host1"}, got.Labels)

		k := got.Kubelet
		assert.Equal(t, w.port, k.Port)
		assert.Equal(t, w.healthz, k.HealthzPort)
		assert.Zero(t, k.ReadOnlyPort)
		assert.Equal(t, "/usr/bin/kubelet", k.Binary)
		assert.Equal(t, "/etc/numa-partition/kubelet-"+w.name+".yaml", k.ConfigPath)
		assert.Equal(t, "/var/lib/kubelet-"+w.name, k.RootDir)
		assert.Equal(t, "/var/lib/kubelet-"+w.name+"/pki", k.CertDir)
		assert.Equal(t, "/var/lib/kubelet-"+w.name+"/device-plugins", k.DevicePluginsDir)
		// In its namespace kubelet writes to /var/log/pods, a node dir
		// bound from the host's /var/log/pods-<partition>.
		assert.Equal(t, "/var/log/pods", k.PodLogsDir)
		assert.Contains(t, got.NodeDirs, NodeDir{Path: "/var/log/pods", Source: "/var/log/pods-" + w.name})
		assert.Equal(t, "/etc/kubernetes/kubelet-"+w.name+".conf", k.Kubeconfig)
		assert.Equal(t, "/etc/kubernetes/bootstrap-kubelet-"+w.name+".conf", k.BootstrapKubeconfig)
		assert.Equal(t, "/"+w.name, k.CgroupRoot)
		assert.Equal(t, 110, k.MaxPods)
		assert.Equal(t, "static", k.CPUManagerPolicy)
		assert.Equal(t, map[string]string{"strict-cpu-reservation": "true"}, k.CPUManagerPolicyOptions)
		assert.Equal(t, "Static", k.MemoryManagerPolicy)
		assert.Equal(t, "best-effort", k.TopologyManagerPolicy)
		assert.Equal(t, "container", k.TopologyManagerScope)
		assert.Equal(t, uint64(500<<20), k.KubeReservedMemory)
		assert.Equal(t, uint64(500<<20), k.SystemReservedMemory)
		assert.Equal(t, uint64(100<<20), k.EvictionHardMemory)

		assert.Equal(t, Runtime{Kind: RuntimeContainerd, Endpoint: "unix:///run/containerd-" + w.name + "/containerd.sock",
			Binary: "/usr/bin/containerd", ConfigPath: "/etc/numa-partition/containerd-" + w.name + ".toml",
			RootDir: "/var/lib/containerd-" + w.name, StateDir: "/run/containerd-" + w.name,
			CNIConfDir: "/etc/cni/net.d", CNIBinDir: "/opt/cni/bin"}, got.Runtime)
		assert.Equal(t, Allocator{Socket: "/run/numa-partition/" + w.name + ".sock", StateDir: "/var/lib/numa-partition/" + w.name, MetricsPort: config.DefaultMetricsPort,
			Mode: config.AllocatorModeKubelet, NRISocket: "/run/containerd-" + w.name + "/nri.sock", NRIPlugin: "numa-partition-" + w.name}, got.Allocator)

		require.Len(t, got.Memory, 1)
		assert.Equal(t, uint64(1100<<20), got.Memory[0].ReservedBytes, "NTO defaults: 500Mi+500Mi+100Mi on the first node")
		assert.Equal(t, gi(16), got.Memory[0].TotalBytes)
		assert.Empty(t, got.Memory[0].Hugepages)
	}
}

func TestPlanModes(t *testing.T) {
	amd := spec{sockets: 2, nodesPerSocket: 4, coresPerNode: 2, threads: 2}
	tests := []struct {
		name   string
		spec   spec
		config string
		nodes  []string // per partition
		names  []string
	}{
		{"socket groups a socket's nodes", amd, "", []string{"0-3", "4-7"}, []string{"node0", "node4"}},
		{"node mode", amd, "[partitioning]\nmode = \"node\"", []string{"0", "1", "2", "3", "4", "5", "6", "7"},
			[]string{"node0", "node1", "node2", "node3", "node4", "node5", "node6", "node7"}},
		{"custom groups keep their order", amd, "[partitioning]\nmode = \"custom\"\ngroups = [[4,5,6,7], \"0-3\"]",
			[]string{"4-7", "0-3"}, []string{"node4", "node0"}},
		{"custom from [[partition]]", amd, "[partitioning]\nmode = \"custom\"\n[[partition]]\nname = \"fast\"\nnodes = [0,1]\n[[partition]]\nnodes = \"2-7\"",
			[]string{"0-1", "2-7"}, []string{"fast", "node2"}},
		{"sparse node and socket ids", spec{sockets: 2, nodesPerSocket: 2, coresPerNode: 2, nodeIDs: []int{0, 1, 33, 34}, socketIDs: []int{36, 8442}}, "",
			[]string{"0-1", "33-34"}, []string{"node0", "node33"}},
		{"memory-only node joins the nearest", spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 2, memOnly: 2, near: []int{1, 0}}, "",
			[]string{"0,3", "1-2"}, []string{"node0", "node1"}},
		{"tie goes to the lowest", spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 2, memOnly: 1}, "",
			[]string{"0,2", "1"}, []string{"node0", "node1"}},
		{"excluded memory-only node", spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 2, memOnly: 1}, "[partitioning]\nexclude_nodes = [2]",
			[]string{"0", "1"}, []string{"node0", "node1"}},
		{"negative socket id", spec{sockets: 1, nodesPerSocket: 2, coresPerNode: 2, socketIDs: []int{-1}}, "[partitioning]\nmode = \"node\"",
			[]string{"0", "1"}, []string{"node0", "node1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPlan(t, tt.spec, tt.config)
			var nodes, names []string
			for _, part := range p.Partitions {
				nodes = append(nodes, part.Nodes.String())
				names = append(names, part.Name)
			}
			assert.Equal(t, tt.nodes, nodes)
			assert.Equal(t, tt.names, names)
		})
	}
}

func TestPlanTieIsWarned(t *testing.T) {
	p := mustPlan(t, spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 2, memOnly: 2}, "")
	assert.Contains(t, p.Warnings, `nodes 2-3 have no CPUs and are as near to nodes 0 as to nodes 1; they join the first (set partitioning.exclude_nodes or use mode = "custom" to choose)`)
}

func TestPlanExcludedCPUNodeStaysWithHost(t *testing.T) {
	p := mustPlan(t, spec{sockets: 1, nodesPerSocket: 2, coresPerNode: 2}, "[partitioning]\nmode = \"node\"\nexclude_nodes = [1]")
	require.Len(t, p.Partitions, 1)
	assert.Equal(t, "0,2-3", p.Host.ReservedCPUs.String(), "node 1's CPUs 2-3 stay with the host")
	assert.Equal(t, "1", p.Host.ExcludedNodes.String())
	require.Len(t, p.Host.ExcludedMemory, 1)
	assert.Equal(t, NodeMemory{Node: 1, TotalBytes: gi(16), Hugepages: []HugepagePlan{}, PageSizes: []uint64{2 << 20, 1 << 30}}, p.Host.ExcludedMemory[0])
}

func TestPlanAutoReservesSMTSiblings(t *testing.T) {
	p := mustPlan(t, spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 4, threads: 2}, "")
	// 8 cores; core 0 = CPUs 0,8; core 4 (socket 1) = CPUs 4,12.
	assert.Equal(t, "0,4,8,12", p.Host.ReservedCPUs.String())
	assert.Equal(t, "1-3,9-11", p.Partitions[0].CPUs.String())
}

func TestPlanAutoSkipsOfflineCPU0(t *testing.T) {
	p := mustPlan(t, spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 4, offline: []int{0}}, "")
	assert.Equal(t, "1,4", p.Host.ReservedCPUs.String())
	assert.Equal(t, "2-3", p.Partitions[0].CPUs.String(), "offline CPU 0 is in no partition")
}

func TestPlanOverrides(t *testing.T) {
	p := mustPlan(t, seedSpec, `
[kubelet]
labels = { "example.com/rack" = "r{index}" }
taints = ["dedicated=hpc:NoSchedule"]
read_only_port = 10255
[runtime]
mode = "shared"
endpoint = "unix:///run/containerd/containerd.sock"
[network]
mode = "host"
[allocator]
metrics_port = 9400
[[partition]]
nodes = [1]
name = "fast"
max_pods = 20
topology_manager_policy = "single-numa-node"
labels = { "example.com/tier" = "gold" }
taints = ["fast=true:NoExecute"]
`)
	p0, p1 := p.Partitions[0], p.Partitions[1]
	assert.Equal(t, "node0", p0.Name)
	assert.Equal(t, "fast", p1.Name)
	assert.Equal(t, "host1-fast", p1.NodeName)
	assert.Equal(t, 110, p0.Kubelet.MaxPods)
	assert.Equal(t, 20, p1.Kubelet.MaxPods)
	assert.Equal(t, "best-effort", p0.Kubelet.TopologyManagerPolicy)
	assert.Equal(t, "single-numa-node", p1.Kubelet.TopologyManagerPolicy)
	assert.Equal(t, map[string]string{"numa-type": "blue", "numa-partition.io/partition": "fast", "numa-partition.io/host": "host1", "example.com/rack": "r1", "example.com/tier": "gold"}, p1.Labels)
	assert.Equal(t, []Taint{{"dedicated", "hpc", "NoSchedule"}, {"fast", "true", "NoExecute"}}, p1.Taints)
	assert.Equal(t, []Taint{{"dedicated", "hpc", "NoSchedule"}}, p0.Taints)
	assert.Equal(t, 10255, p0.Kubelet.ReadOnlyPort)
	assert.Equal(t, 10265, p1.Kubelet.ReadOnlyPort)
	assert.Equal(t, Runtime{Kind: RuntimeShared, Endpoint: "unix:///run/containerd/containerd.sock"}, p1.Runtime)
	assert.Equal(t, 9410, p1.Allocator.MetricsPort)
	assert.Contains(t, p.Warnings[0], "kubelets that share a runtime")
}

// Kubelet's Memory Manager rule, the documented invariant of the plan:
// per partition Σ ReservedBytes = kube + system + eviction.
func TestPlanReservedMemoryInvariant(t *testing.T) {
	amd := spec{sockets: 2, nodesPerSocket: 2, coresPerNode: 2}
	for _, text := range []string{
		"",
		"[kubelet]\nkube_reserved_memory = \"1Gi\"\nsystem_reserved_memory = \"2Gi\"\neviction_hard_memory = \"0\"",
		"[host]\nreserved_memory = { 0 = \"600Mi\", 1 = \"500Mi\", 3 = \"1100Mi\" }",
		"[[partition]]\nnodes = [2]\nkube_reserved_memory = \"4Gi\"",
	} {
		p := mustPlan(t, amd, text)
		for _, part := range p.Partitions {
			var sum uint64
			for _, nm := range part.Memory {
				sum += nm.ReservedBytes
			}
			k := part.Kubelet
			assert.Equal(t, k.KubeReservedMemory+k.SystemReservedMemory+k.EvictionHardMemory, sum, "config %q partition %s", text, part.Name)
		}
	}
	p := mustPlan(t, amd, "[host]\nreserved_memory = { 0 = \"600Mi\", 1 = \"500Mi\", 3 = \"1100Mi\" }")
	assert.Equal(t, uint64(600<<20), p.Partitions[0].Memory[0].ReservedBytes)
	assert.Equal(t, uint64(500<<20), p.Partitions[0].Memory[1].ReservedBytes)
	assert.Equal(t, uint64(0), p.Partitions[1].Memory[0].ReservedBytes)
	assert.Equal(t, uint64(1100<<20), p.Partitions[1].Memory[1].ReservedBytes)
}

func TestPlanHugepages(t *testing.T) {
	p := mustPlan(t, spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 2, memOnly: 1, near: []int{0}}, `
[[host.hugepages]]
size = "1Gi"
count = 4
[[host.hugepages]]
size = "2Mi"
count = 512
nodes = [1]
`)
	m0 := p.Partitions[0].Memory
	require.Len(t, m0, 2, "node 0 and memory-only node 2")
	assert.Equal(t, []HugepagePlan{{PageSize: 1 << 30, Count: 4}}, m0[0].Hugepages)
	assert.Empty(t, m0[1].Hugepages, "default nodes are the ones with CPUs")
	assert.Equal(t, []HugepagePlan{{PageSize: 2 << 20, Count: 512}, {PageSize: 1 << 30, Count: 4}}, p.Partitions[1].Memory[0].Hugepages)
}

func TestPlanManyNodesSetsMaxAllowable(t *testing.T) {
	p := mustPlan(t, spec{sockets: 2, nodesPerSocket: 5, coresPerNode: 2}, "")
	assert.Equal(t, map[string]string{"max-allowable-numa-nodes": "10"}, p.Partitions[0].Kubelet.TopologyManagerOptions)
	p = mustPlan(t, spec{sockets: 2, nodesPerSocket: 4, coresPerNode: 2}, "")
	assert.Nil(t, p.Partitions[0].Kubelet.TopologyManagerOptions)
}

func TestPlanFirewareSharedCPUsMerge(t *testing.T) {
	topo := synth(spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 2})
	// One dump lists every CPU on every node.
	for i := range topo.Nodes {
		topo.Nodes[i].CPUs = bitmask.MustParseCPUList("0-3")
	}
	topo.Sockets[0].Nodes = bitmask.NewNodeSet(0)
	topo.Sockets[1].Nodes = bitmask.NewNodeSet(1)
	c := mustParse(t, "[kubelet]\nhostname = \"h\"\n[host]\nreserved_cpus = \"0\"")
	p, err := NewPlan(topo, c)
	require.NoError(t, err)
	require.Len(t, p.Partitions, 1)
	assert.Equal(t, "0-1", p.Partitions[0].Nodes.String())
	assert.Contains(t, p.Warnings, "CPUs 0-3 are listed on several of nodes 0-1 (a firmware error); nodes sharing CPUs form one partition")
}

// The cluster's DNS settings reach every partition's kubelet.
func TestClusterDNSReachesEveryPartition(t *testing.T) {
	c, err := config.Parse("config.toml", []byte("[kubelet]\nhostname = \"h\"\ncluster_dns = [\"10.96.0.10\", \"fd00::a\"]\ncluster_domain = \"cluster.local\""))
	require.NoError(t, err)
	p, err := NewPlan(synth(seedSpec), c)
	require.NoError(t, err)
	require.Len(t, p.Partitions, 2)
	for _, part := range p.Partitions {
		assert.Equal(t, []string{"10.96.0.10", "fd00::a"}, part.Kubelet.ClusterDNS, part.Name)
		assert.Equal(t, "cluster.local", part.Kubelet.ClusterDomain, part.Name)
	}
	c, err = config.Parse("config.toml", []byte("[kubelet]\nhostname = \"h\"\ncluster_domain = \"Cluster_Local\""))
	require.NoError(t, err)
	_, err = NewPlan(synth(seedSpec), c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `config.toml:3: key "kubelet.cluster_domain": "Cluster_Local" is not a DNS domain: `)
}

// Found by the e2e: with cluster_dns but no cluster_domain, kubelet wrote
// no cluster search path into pods' resolv.conf, and a Service's short
// name failed to resolve.
func TestClusterDomainDefaultsToKubeadmsWithClusterDNS(t *testing.T) {
	p := mustPlan(t, seedSpec, "[kubelet]\ncluster_dns = [\"10.96.0.10\"]")
	assert.Equal(t, "cluster.local", p.Partitions[0].Kubelet.ClusterDomain)
	p = mustPlan(t, seedSpec, "[kubelet]\ncluster_dns = [\"10.96.0.10\"]\ncluster_domain = \"corp.example\"")
	assert.Equal(t, "corp.example", p.Partitions[0].Kubelet.ClusterDomain)
	p = mustPlan(t, seedSpec, "")
	assert.Empty(t, p.Partitions[0].Kubelet.ClusterDomain, "no cluster DNS, no domain")
}

// Issue 27: strict-cpu-reservation was planned only when the user gave
// no CPU manager options, but always rendered: the plan and the rendered
// KubeletConfiguration differed. The plan has it beside the user's.
func TestStrictCPUReservationBesideTheUsersOptions(t *testing.T) {
	p := mustPlan(t, seedSpec, "[kubelet.cpu_manager_policy_options]\nfull-pcpus-only = \"true\"")
	for _, part := range p.Partitions {
		assert.Equal(t, map[string]string{"full-pcpus-only": "true", "strict-cpu-reservation": "true"}, part.Kubelet.CPUManagerPolicyOptions)
	}
	p = mustPlan(t, seedSpec, "[kubelet]\ncpu_manager_policy = \"none\"")
	assert.Empty(t, p.Partitions[0].Kubelet.CPUManagerPolicyOptions)
}
