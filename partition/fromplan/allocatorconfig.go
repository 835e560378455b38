// Package fromplan makes, from one planned partition, what its allocator
// and the allocator's daemon are told: the allocator.Config, the metrics
// address, the memory that moved since the plan, the daemon's options and
// its NRI plugin (daemon.go).
//
// It stands between the planner and the allocator so that each imports
// neither the other's tree: the planner decides a plan and never imports
// partition/allocator, and the allocator's packages (the daemon too) take
// an allocator.Config and an address and never import the planner (its
// value rules, partition/planner/validation, a leaf, aside). Both
// decide by kubelet's managers, partition/policy, which import neither
// (internal/importrules holds all three to that).
package fromplan

import (
	"fmt"
	"net"
	"strconv"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// AllocatorConfig is the allocator configuration of one planned partition:
// its nodes' memory and hugepages with the host's reservations on them, the
// distances between them, and its kubelet's Topology Manager settings. The
// daemon must decide exactly as that kubelet would, so everything comes
// from the same plan that rendered the kubelet's configuration.
func AllocatorConfig(p planner.Partition, t *numa.Topology) (allocator.Config, error) {
	// In nri mode the allocator decides with the configured policy and
	// the kubelet's managers are off; otherwise it decides as the kubelet.
	policy, scope, options := p.Kubelet.TopologyManagerPolicy, p.Kubelet.TopologyManagerScope, p.Kubelet.TopologyPolicyOptions
	if p.Allocator.Mode == config.AllocatorModeNRI {
		policy, scope, options = p.Allocator.TopologyPolicy, p.Allocator.TopologyScope, p.Allocator.TopologyPolicyOptions
	}
	cfg := allocator.Config{Policy: policy, Scope: scope}
	for _, m := range p.Memory {
		n := allocator.NodeResources{
			ID:        m.Node,
			Memory:    machineMemory(m, t),
			Hugepages: map[uint64]uint64{},
			Reserved:  map[allocator.ResourceName]uint64{allocator.ResourceMemory: m.ReservedBytes},
		}
		for _, h := range m.Hugepages {
			n.Hugepages[h.PageSize] = h.Count * h.PageSize
			if h.ReservedCount > 0 {
				n.Reserved[allocator.ResourceName(units.HugepageResource(h.PageSize))] = h.ReservedCount * h.PageSize
			}
		}
		cfg.Nodes = append(cfg.Nodes, n)
	}
	if t != nil {
		cfg.Distances = map[int]map[int]int{}
		for _, a := range p.Memory {
			row := map[int]int{}
			for _, b := range p.Memory {
				d, ok := t.Distance(a.Node, b.Node)
				if !ok {
					return cfg, fmt.Errorf("partition %s: no distance between NUMA nodes %d and %d in the topology", p.Name, a.Node, b.Node)
				}
				row[b.Node] = d
			}
			cfg.Distances[a.Node] = row
		}
	}
	// The planner checked the options with the same reader.
	var err error
	if cfg.PolicyOptions, err = options(); err != nil {
		return cfg, fmt.Errorf("partition %s: topologyManagerOptions: %w", p.Name, err)
	}
	return cfg, nil
}

// machineMemory is node m's memory as the allocator counts it: the
// machine's, where the topology knows it, else the plan's. A reboot can
// move a node's MemTotal (the e2e's VM: node 1 had 2,062,884 kB when
// planned and 2,017,620 kB after its reboot), and kubelet, whose
// decisions the allocator must make, counts what the machine has now.
// Refusing the plan there stopped the allocator at boot, and in nri mode
// with it every container of the partition. A plan file's figure above
// the machine's (#38: 2^64-1 bytes was served and a 4 Pi pod admitted) is
// never counted either. MemoryDrift says where the two differ.
func machineMemory(m planner.NodeMemory, t *numa.Topology) uint64 {
	if t == nil {
		return m.TotalBytes
	}
	if n, ok := t.Node(m.Node); ok && n.MemoryBytes > 0 {
		return n.MemoryBytes
	}
	return m.TotalBytes
}

// MemoryDrift names each node of partition p whose memory on this
// machine differs from the plan's, for the allocator daemon to say so at
// start: the Node's allocatable moved with it, which `plan` shows again.
func MemoryDrift(p planner.Partition, t *numa.Topology) []string {
	var out []string
	for _, m := range p.Memory {
		if now := machineMemory(m, t); now != m.TotalBytes {
			out = append(out, fmt.Sprintf("partition %s: node %d has %s of memory now, the plan %s (a reboot or a firmware change moves it): the allocator counts the machine's; run plan again to see the Node's allocatable",
				p.Name, m.Node, units.FormatBytes(now), units.FormatBytes(m.TotalBytes)))
		}
	}
	return out
}

// MetricsAddr is where partition p's daemon serves /metrics, "" when
// the plan has no metrics port: the partition's own address in network
// namespace mode (its Node's InternalIP, which the cluster's Prometheus
// discovers), else every address of the host, as kubelet listens there,
// on the partition's port of its own (base + index × port stride).
// The metrics hold no pod names and no secrets, as node_exporter's and
// kube-state-metrics' are served unauthenticated; allocator.metrics_port
// = 0 turns them off and --metrics-addr 127.0.0.1:PORT keeps them local.
func MetricsAddr(p planner.Partition) string {
	if p.Allocator.MetricsPort == 0 {
		return ""
	}
	host := ""
	if p.Network != nil && p.Network.Address.IsValid() {
		host = p.Network.Address.Addr().String()
	}
	return net.JoinHostPort(host, strconv.Itoa(p.Allocator.MetricsPort))
}
