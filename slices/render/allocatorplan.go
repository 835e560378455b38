package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// The allocator reads its partition of the rendered plan (PlanPath) once,
// at start. Its pools, reservations and policies can change with no line
// of its unit: it would then keep the old plan until the next reboot,
// placing containers in pools the host no longer has and reporting drift
// (its Node condition) against them. So its drop-in carries the digest of
// what it reads, and a new plan of that restarts it; a change it does not
// read (a kubelet's binary or maxPods) leaves it running.

// servedPlan is what of partition p its allocator reads from the plan:
// fromplan's config and options (memory, reservations, pools, policies,
// where it listens, the Node and labels it reports), the NRI plugin's
// CPUs and nodes, and the drift check's slice, cpuset and pools
// (TestServedPlanCoversWhatTheAllocatorReads holds the list to them).
// Each node's memory size is left out: the allocator counts the
// machine's (fromplan.AllocatorConfig), and it moves between boots of the
// host (planner.Figures).
type servedPlan struct {
	Name, Slice, NodeName  string
	Nodes, MemoryNodes     bitmask.NodeSet
	CPUs, HostReservedCPUs bitmask.CPUSet
	Memory                 []planner.NodeMemory
	Labels                 map[string]string
	Network                *planner.PartitionNetwork
	Kubeconfig             string
	TopologyManagerPolicy  string
	TopologyManagerScope   string
	TopologyManagerOptions map[string]string
	Allocator              planner.Allocator
}

// servedPlanDigest is the digest of p's servedPlan.
func servedPlanDigest(p *planner.Partition) (string, error) {
	served := servedPlan{
		Name: p.Name, Slice: p.Slice, NodeName: p.NodeName,
		Nodes: p.Nodes, MemoryNodes: p.MemoryNodes, CPUs: p.CPUs, HostReservedCPUs: p.HostReservedCPUs,
		Memory: slices.Clone(p.Memory), Labels: p.Labels, Network: p.Network,
		Kubeconfig:             p.Kubelet.Kubeconfig,
		TopologyManagerPolicy:  p.Kubelet.TopologyManagerPolicy,
		TopologyManagerScope:   p.Kubelet.TopologyManagerScope,
		TopologyManagerOptions: p.Kubelet.TopologyManagerOptions,
		Allocator:              p.Allocator,
	}
	for i := range served.Memory {
		served.Memory[i].TotalBytes = 0
	}
	b, err := json.Marshal(served)
	if err != nil {
		return "", fmt.Errorf("partition %s: %w", p.Name, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
