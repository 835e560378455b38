package partition

import (
	"fmt"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/units"
)

// InitConfig writes a commented config for a discovered machine: the
// settings that matter on it are live, every other key is shown commented
// out at its default. It plans the result on the machine to describe the
// partitions in comments, and shrinks the memory reservations when the
// machine's nodes are too small for the defaults (test VMs), so the file
// it writes always plans.
func InitConfig(t *numa.Topology, hostname string) []byte {
	m := newMachine(t)
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }

	small := smallestCPUNodeMemory(m)
	kubeRes, sysRes, evict := DefaultKubeReservedMemory, DefaultSystemReservedMemory, DefaultEvictionHardMemory
	shrink := small > 0 && small < 4<<30
	if shrink {
		kubeRes, sysRes = "100Mi", "100Mi"
	}

	line("# numa-partition config, written by `numa-partition config init` for %s.", orDash(hostname))
	line("# Machine: %d sockets, %d NUMA nodes (%s), online CPUs %s.", len(t.Sockets), len(t.Nodes), m.nodes, m.online)
	line("# Every key is optional; commented keys show their defaults. See docs/config.md.")
	line("")
	line("[partitioning]")
	line("# socket: one partition per physical package with all its NUMA nodes;")
	line("# node: one per NUMA node with CPUs; custom: groups below or [[partition]] nodes.")
	line("mode = \"socket\"")
	line("# groups = [[0, 1], [2, 3]]   # mode = \"custom\" only")
	cpuless := m.nodes.Difference(m.cpuNodes())
	if !cpuless.IsEmpty() {
		line("# Nodes %s have no CPUs (memory-only, GPU or CXL memory); they join the", cpuless)
		line("# nearest partition by distance. Uncomment to keep them out of every partition:")
		line("# exclude_nodes = \"%s\"", cpuless)
	} else {
		line("# exclude_nodes = []")
	}
	line("")
	line("[host]")
	line("# \"auto\": the first core of each socket with its SMT siblings (here %s).", orDash(autoReservedCPUs(m, nil, func(string, ...any) {}).String()))
	line("reserved_cpus = \"auto\"")
	line("# memory_nodes = [0]            # default: the nodes of reserved_cpus")
	line("# Where each partition's kubelet reservation lies (node = size); the sizes of a")
	line("# partition's nodes must add up to kube + system + eviction. Default: all on its first node.")
	line("# reserved_memory = { 0 = \"1100Mi\" }")
	line("")
	line("# Hugepages apply allocates on each node (default nodes: every partition node with CPUs).")
	line("# Page sizes here: %s.", orDash(strings.Join(machinePageSizes(m), ", ")))
	line("# [[host.hugepages]]")
	line("# size = \"%s\"", firstOr(machinePageSizes(m), "2Mi"))
	line("# count = 0")
	line("# nodes = [0, 1]")
	line("")
	line("[kubelet]")
	line("# hostname = \"%s\"  # default: the host's name; node names derive from it", hostname)
	line("# binary = %q", DefaultKubeletBinary)
	line("# node_name = %q", DefaultNodeName)
	line("# Templates know {partition}, {index}, {hostname} and {root_dir}.")
	line("# config_path = %q", DefaultKubeletConfigPath)
	line("# root_dir = %q", DefaultRootDir)
	line("# cert_dir = %q", DefaultCertDir)
	line("# kubeconfig = %q", DefaultKubeconfig)
	line("# bootstrap_kubeconfig = %q", DefaultBootstrapKubeconfig)
	line("# device_plugins_dir = %q", DefaultDevicePluginsDir)
	line("# pod_logs_dir = %q", DefaultPodLogsDir)
	line("# Partition i listens on base + i × port_stride.")
	line("# port = %d", DefaultPort)
	line("# healthz_port = %d", DefaultHealthzPort)
	line("# read_only_port = 0             # 0 = off; 10255 turns it on")
	line("# port_stride = %d", DefaultPortStride)
	line("# max_pods = %d", DefaultMaxPods)
	if shrink {
		line("# The smallest node here has %s: reservations are lowered from the", units.FormatBytes(small))
		line("# defaults (500Mi/500Mi/100Mi) so that each fits on one node.")
		line("kube_reserved_memory = %q", kubeRes)
		line("system_reserved_memory = %q", sysRes)
		line("eviction_hard_memory = %q", evict)
	} else {
		line("# kube_reserved_memory = %q", kubeRes)
		line("# system_reserved_memory = %q", sysRes)
		line("# eviction_hard_memory = %q", evict)
	}
	line("# cpu_manager_policy = %q", DefaultCPUManagerPolicy)
	line("# cpu_manager_policy_options = { \"strict-cpu-reservation\" = \"true\" }")
	line("# memory_manager_policy = %q", DefaultMemoryManagerPolicy)
	line("# topology_manager_policy = %q   # none, best-effort, restricted, single-numa-node", DefaultTopologyManagerPolicy)
	line("# topology_manager_scope = %q", DefaultTopologyManagerScope)
	line("# topology_manager_options = { \"prefer-closest-numa-nodes\" = \"true\" }")
	line("# Added to numa-type=<colour> and %s=<name>:", LabelPartition)
	line("# labels = { \"example.com/pool\" = \"hpc\" }")
	line("# taints = [\"dedicated=hpc:NoSchedule\"]")
	line("# extra_args = [\"--v=2\"]")
	line("")
	line("[runtime]")
	line("# containerd: one containerd per partition (kubelets sharing a runtime kill")
	line("# each other's pods as orphans); shared: every kubelet uses endpoint.")
	line("# mode = \"containerd\"")
	line("# endpoint = %q", DefaultContainerdEndpoint)
	line("# binary = %q", DefaultContainerdBinary)
	line("# config_path = %q", DefaultContainerdConfigPath)
	line("# root_dir = %q", DefaultContainerdRootDir)
	line("# state_dir = %q", DefaultContainerdStateDir)
	line("")
	line("[allocator]")
	line("# socket = %q", DefaultAllocatorSocket)
	line("# state_dir = %q", DefaultAllocatorStateDir)
	line("# socket_group = \"\"")
	line("# metrics_port = 0               # 0 = off; else base + index × port_stride on 127.0.0.1")
	line("")
	line("# Per-partition overrides: nodes selects the partition holding them.")
	cfg := &Config{Kubelet: KubeletConfig{Hostname: or(hostname, "host"), KubeReservedMemory: kubeRes, SystemReservedMemory: sysRes}}
	if p, err := NewPlan(t, cfg); err == nil {
		line("# With this file the plan is:")
		for _, part := range p.Partitions {
			line("#   %s: nodes %s, CPUs %s", part.Name, part.Nodes, orDash(part.CPUs.String()))
		}
		if len(p.Partitions) > 0 {
			line("# [[partition]]")
			line("# nodes = [%d]", p.Partitions[0].Nodes.Min())
			line("# name = %q", p.Partitions[0].Name)
			line("# max_pods = 250")
			line("# topology_manager_policy = \"single-numa-node\"")
			line("# labels = { \"example.com/tier\" = \"gold\" }")
		}
	} else {
		line("# The defaults do not plan on this machine yet:")
		for _, l := range strings.Split(err.Error(), "\n") {
			line("#   %s", l)
		}
	}
	return []byte(b.String())
}

func smallestCPUNodeMemory(m *machine) uint64 {
	var small uint64
	for _, id := range m.cpuNodes().IDs() {
		if mem := m.memory[id]; mem > 0 && (small == 0 || mem < small) {
			small = mem
		}
	}
	return small
}

func machinePageSizes(m *machine) []string {
	seen := map[uint64]bool{}
	var sizes []uint64
	for _, n := range m.t.Nodes {
		for _, h := range n.Hugepages {
			if !seen[h.PageSize] {
				seen[h.PageSize] = true
				sizes = append(sizes, h.PageSize)
			}
		}
	}
	for i := 1; i < len(sizes); i++ {
		for j := i; j > 0 && sizes[j] < sizes[j-1]; j-- {
			sizes[j], sizes[j-1] = sizes[j-1], sizes[j]
		}
	}
	out := make([]string, len(sizes))
	for i, s := range sizes {
		out[i] = units.FormatBytes(s)
	}
	return out
}

func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}
