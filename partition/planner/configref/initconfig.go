package configref

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// InitConfig writes a commented config for a discovered machine: the
// settings that matter on it are live, every other key is shown commented
// out at its default, each with its summary from Reference. It plans the
// result on the machine to describe the partitions in comments, and
// shrinks the memory reservations when the machine's nodes are too small
// for the defaults (test VMs), so the file it writes always plans. With
// cluster (config init --from-cluster) the kubelets join that cluster as
// a kubeadm worker would: its clusterDNS and clusterDomain are live.
func InitConfig(t *numa.Topology, hostname string, cluster *FromCluster) []byte {
	m := planner.Summarize(t)
	v := configView{
		live:    map[string]string{"partitioning.mode": tomlValue(config.ModeSocket), "host.reserved_cpus": tomlValue(config.ReservedCPUsAuto)},
		example: map[string]string{"kubelet.hostname": tomlValue(hostname)},
		notes:   map[string][]string{},
	}
	v.header = []string{
		fmt.Sprintf("numa-partition config, written by `numa-partition config init` for %s.", orDash(hostname)),
		fmt.Sprintf("Machine: %d sockets, %d NUMA nodes (%s), online CPUs %s.", len(t.Sockets), len(t.Nodes), m.Nodes, m.Online),
		"Every key is optional; commented keys show their defaults. Path and name",
		"templates may use {partition}, {index}, {hostname} and {root_dir}.",
		"`numa-partition config reference` describes every key in full.",
	}

	if cpuless := m.Nodes.Difference(m.CPUNodes); !cpuless.IsEmpty() {
		v.notes["partitioning.exclude_nodes"] = []string{fmt.Sprintf("Here nodes %s have no CPUs (memory-only, GPU or CXL memory); "+
			"they join the nearest partition by distance unless excluded.", cpuless)}
		v.example["partitioning.exclude_nodes"] = tomlValue(cpuless.String())
	}
	v.notes["host.reserved_cpus"] = []string{fmt.Sprintf("Here auto reserves CPUs %s.", orDash(m.AutoReservedCPUs.String()))}
	sizes := pageSizes(t)
	v.notes["host.hugepages[]"] = []string{"Page sizes here: " + orDash(strings.Join(sizes, ", ")) + "."}
	v.example["host.hugepages[].size"] = tomlValue(firstOr(sizes, "2Mi"))

	kubeRes, sysRes := config.DefaultKubeReservedMemory, config.DefaultSystemReservedMemory
	if small := smallestCPUNodeMemory(m); small > 0 && small < 4<<30 {
		kubeRes, sysRes = "100Mi", "100Mi"
		v.notes["kubelet.kube_reserved_memory"] = []string{fmt.Sprintf("The smallest node here has %s: the reservations are lowered from "+
			"the defaults (%s/%s/%s) so that each fits on one node.", units.FormatBytes(small),
			config.DefaultKubeReservedMemory, config.DefaultSystemReservedMemory, config.DefaultEvictionHardMemory)}
		v.live["kubelet.kube_reserved_memory"] = tomlValue(kubeRes)
		v.live["kubelet.system_reserved_memory"] = tomlValue(sysRes)
		v.live["kubelet.eviction_hard_memory"] = tomlValue(config.DefaultEvictionHardMemory)
	}

	cluster.set(&v)
	cfg := &config.Config{Kubelet: config.KubeletConfig{Hostname: cmp.Or(hostname, "host"), KubeletOverrides: config.KubeletOverrides{KubeReservedMemory: kubeRes, SystemReservedMemory: sysRes}}}
	if p, err := planner.NewPlan(t, cfg); err == nil {
		notes := []string{"With this file the plan is:"}
		for _, part := range p.Partitions {
			notes = append(notes, fmt.Sprintf("  %s: nodes %s, CPUs %s", part.Name, part.Nodes, orDash(part.CPUs.String())))
		}
		v.notes["partition[]"] = notes
		if len(p.Partitions) > 0 {
			v.example["partition[].nodes"] = tomlValue([]int{p.Partitions[0].Nodes.Min()})
			v.example["partition[].name"] = tomlValue(p.Partitions[0].Name)
		}
	} else {
		notes := []string{"The defaults do not plan on this machine yet:"}
		for _, l := range strings.Split(err.Error(), "\n") {
			notes = append(notes, "  "+l)
		}
		v.notes["partition[]"] = notes
	}
	return v.write()
}

func smallestCPUNodeMemory(m planner.MachineSummary) uint64 {
	var small uint64
	for _, id := range m.CPUNodes.IDs() {
		if mem := m.Memory[id]; mem > 0 && (small == 0 || mem < small) {
			small = mem
		}
	}
	return small
}

func pageSizes(t *numa.Topology) []string {
	seen := map[uint64]bool{}
	var sizes []uint64
	for _, n := range t.Nodes {
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

// orDash is s, or "-" when s is empty.
func orDash(s string) string { return cmp.Or(s, "-") }

// FromCluster is what `config init --from-cluster` read of the cluster a
// kubeadm worker joins: kube-system/kubelet-config's clusterDNS and
// clusterDomain, which kubeadm join writes into a worker's kubelet
// config.
type FromCluster struct {
	Source        string // where and with what it was read, for the comment
	ClusterDNS    []string
	ClusterDomain string
}

// set makes the cluster's settings live in v (nothing for nil).
func (c *FromCluster) set(v *configView) {
	if c == nil {
		return
	}
	from := []string{"From " + c.Source + ", as kubeadm join takes it."}
	if len(c.ClusterDNS) > 0 {
		v.live["kubelet.cluster_dns"] = tomlValue(c.ClusterDNS)
		v.notes["kubelet.cluster_dns"] = from
	}
	if c.ClusterDomain != "" {
		v.live["kubelet.cluster_domain"] = tomlValue(c.ClusterDomain)
		v.notes["kubelet.cluster_domain"] = from
	}
}
