package kubeletgen

import (
	"fmt"
	"maps"
	"sort"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// How each kubelet ends up offering exactly its partition.
//
// kubelet (through cadvisor) counts what it is shown (machine.go): the
// partition's own NUMA nodes, their CPUs and MemTotal, or, in the one
// case the static CPU Manager forbids that, the whole machine. What it
// offers is
//
//	allocatable.cpu    = |CPUs it sees| − |reservedSystemCPUs|
//	                     (reservedSystemCPUs replaces the cpu of
//	                     systemReserved and kubeReserved)
//	allocatable.memory = MemTotal − Σ hugepages − (kubeReserved +
//	                     systemReserved + evictionHard)
//
// and the Static memory manager builds, per NUMA node n it sees,
//
//	allocatable(n) = total(n) − reservedMemory(n) − hugepages(n)
//
// insisting that Σ_n reservedMemory(n) = kubeReserved + systemReserved +
// evictionHard for each memory type. So, for partition p:
//
//   - reservedSystemCPUs = the CPUs it sees − p.CPUs: p's own
//     host-reserved ones (and, shown the whole machine, the other
//     partitions' and the host's too). allocatable.cpu = |p.CPUs|.
//   - reservedMemory(n) = p.Memory[n].ReservedBytes on p's own nodes,
//     which the planner made add up to kubeReserved + systemReserved +
//     evictionHard; so allocatable.memory = Σ_{n∈p} (total(n) −
//     hugepages(n) − reserved(n)), p's share, and the memory manager
//     agrees node by node.
//   - Shown the whole machine, every foreign node is reserved too, whole:
//     reservedMemory(n) = total(n) − seen hugepages(n) (reserving more
//     would underflow the memory manager's uint64 table), and
//     systemReserved = R − kubeReserved − evictionHard with R = Σ_n
//     reservedMemory(n): the foreign nodes are "system" memory as far as
//     this kubelet knows, and allocatable is the same share.
//
// Hugepages cannot be reserved: kubelet accepts only cpu, memory,
// ephemeral-storage and pid in systemReserved/kubeReserved, and a
// hugepages-<size> reservedMemory entry must add up to their (zero)
// hugepages value. So each kubelet is shown only its partition's pools
// (hugepageview.go), and its Node's hugepages capacity and allocatable
// are the partition's pages; allocatable.memory above counts only the
// hugepages it sees, which is the same Σ over p's nodes.

// onlineCPUs are the CPUs kubelet counts as capacity. Plans made before
// Host.OnlineCPUs existed still carry every online CPU in the reserved and
// partition sets (except on excluded nodes, which such plans cannot have).
func onlineCPUs(plan *planner.Plan) bitmask.CPUSet {
	if !plan.Host.OnlineCPUs.IsEmpty() {
		return plan.Host.OnlineCPUs
	}
	all := plan.Host.ReservedCPUs
	for _, p := range plan.Partitions {
		all = all.Union(p.CPUs).Union(p.HostReservedCPUs)
	}
	return all
}

// ReservedSystemCPUs is every CPU p's kubelet counts (m.CPUs) that
// is not one of p's pod CPUs: kubelet refuses a reserved CPU it does not
// count ("reserved-cpus … is not a subset of online-cpus"). Online CPUs
// of no node are not counted, so they stay out.
func ReservedSystemCPUs(m Machine, p *planner.Partition) (bitmask.CPUSet, error) {
	if p.CPUs.IsEmpty() {
		return bitmask.CPUSet{}, fmt.Errorf("partition %s has no CPUs for pods: kubelet's static CPU manager needs at least one", p.Name)
	}
	if extra := p.CPUs.Difference(m.CPUs); !extra.IsEmpty() {
		return bitmask.CPUSet{}, fmt.Errorf("partition %s: CPUs %s are not online (online: %s); kubelet refuses reservedSystemCPUs outside the online set", p.Name, extra, m.CPUs)
	}
	reserved := m.CPUs.Difference(p.CPUs)
	if reserved.IsEmpty() && p.Kubelet.CPUManagerPolicy == "static" {
		// Static policy refuses a zero reservation: the shared pool could
		// be emptied.
		return bitmask.CPUSet{}, fmt.Errorf("partition %s holds every online CPU (%s): the static CPU manager needs at least one reserved CPU; reserve one for the host", p.Name, m.CPUs)
	}
	return reserved, nil
}

// machineMemory is every NUMA node's memory as the plan describes it:
// the partitions' nodes and the excluded ones, ascending by node.
func machineMemory(plan *planner.Plan) ([]planner.NodeMemory, error) {
	var all []planner.NodeMemory
	seen := map[int]string{}
	add := func(owner string, ms []planner.NodeMemory) error {
		for _, m := range ms {
			if prev, ok := seen[m.Node]; ok {
				return fmt.Errorf("NUMA node %d is described twice (%s and %s)", m.Node, prev, owner)
			}
			seen[m.Node] = owner
			all = append(all, m)
		}
		return nil
	}
	for _, p := range plan.Partitions {
		if err := add("partition "+p.Name, p.Memory); err != nil {
			return nil, err
		}
		for _, id := range p.Nodes.IDs() {
			if _, ok := seen[id]; !ok {
				return nil, fmt.Errorf("partition %s: NUMA node %d has no memory description", p.Name, id)
			}
		}
	}
	if err := add("host.excludedMemory", plan.Host.ExcludedMemory); err != nil {
		return nil, err
	}
	for _, id := range plan.Host.ExcludedNodes.IDs() {
		if _, ok := seen[id]; !ok {
			return nil, fmt.Errorf("excluded NUMA node %d has no memory description in host.excludedMemory: every kubelet must reserve it whole", id)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Node < all[j].Node })
	return all, nil
}

// HugepageBytes is the memory a node's planned hugepages take.
func HugepageBytes(m planner.NodeMemory) uint64 {
	var sum uint64
	for _, h := range m.Hugepages {
		sum += h.PageSize * h.Count
	}
	return sum
}

// NodeReservation is reservedMemory for one NUMA node of one kubelet.
type NodeReservation struct {
	Node  int
	Bytes uint64
	Own   bool // the node belongs to the partition
	// Allocatable is what the memory manager offers on the node:
	// total − hugepages − Bytes (0 on every foreign node).
	Allocatable uint64
}

// ReservedMemory derives each node's reservedMemory "memory" value for
// partition p shown mach (MachineOf; see the derivation above), ascending
// by node, and its sum.
// Nodes whose reservation is 0 are left out: kubelet's docs ask not to
// list zero limits.
func ReservedMemory(mach Machine, p *planner.Partition) ([]NodeReservation, uint64, error) {
	view := hasView(mach.Nodes)
	var out []NodeReservation
	var sum uint64
	for _, m := range mach.Nodes {
		if huge := HugepageBytes(m); huge > m.TotalBytes {
			return nil, 0, fmt.Errorf("NUMA node %d: planned hugepages (%d bytes) exceed its memory (%d bytes)", m.Node, huge, m.TotalBytes)
		}
		huge := seenHugepageBytes(p, m, view)
		r := NodeReservation{Node: m.Node, Own: p.Nodes.Has(m.Node)}
		if r.Own {
			if m.ReservedBytes > m.TotalBytes-huge {
				return nil, 0, fmt.Errorf("partition %s, NUMA node %d: reserved memory %d bytes exceeds what hugepages leave (%d bytes)", p.Name, m.Node, m.ReservedBytes, m.TotalBytes-huge)
			}
			r.Bytes = m.ReservedBytes
		} else {
			r.Bytes = m.TotalBytes - huge
		}
		r.Allocatable = m.TotalBytes - huge - r.Bytes
		if r.Bytes > 0 {
			out = append(out, r)
		}
		sum += r.Bytes
	}
	return out, sum, nil
}

// MemoryReservations splits the total reservation R into kubeReserved,
// systemReserved and evictionHard (bytes): kubeReserved and evictionHard
// as planned, systemReserved takes the rest (the foreign nodes too, when
// the kubelet sees them).
//
// A kubelet that counts only its slice's memory as used (m.HostMemoryUnseen:
// on cgroup v2 no cgroup file counts the host's pages on the partition's
// nodes, and a file made by the holder is refused by kubelet's cgroup
// library) would take the host's reservation there for free memory: its
// memory.available would reach evictionHard only once the nodes held
// less than nothing, and the kernel's OOM killer would come first
// (measured in the e2e). There the rest is added to evictionHard instead
// and systemReserved is 0: kubelet evicts once its slice fills what the
// host's reservation does not cover, and allocatable, which counts the
// sum, is the same.
func MemoryReservations(p *planner.Partition, m Machine, total uint64) (kube, system, eviction uint64, err error) {
	kube, eviction = p.Kubelet.KubeReservedMemory, p.Kubelet.EvictionHardMemory
	if total < kube+eviction {
		return 0, 0, 0, fmt.Errorf("partition %s: the memory reserved on the nodes its kubelet sees (%d bytes) is less than kubeReserved + evictionHard (%d + %d bytes); raise the nodes' reservation", p.Name, total, kube, eviction)
	}
	if m.HostMemoryUnseen {
		return kube, 0, total - kube, nil
	}
	return kube, total - kube - eviction, eviction, nil
}

// TopologyManagerPolicyOptions are the plan's options as the planner
// decided them (it sets max-allowable-numa-nodes on a machine of more
// NUMA nodes than kubelet's default limit), read with the plan's one
// reader of them (Kubelet.TopologyPolicyOptions): a plan file's option
// kubelet would refuse is an error here. They are rendered in the plan's
// map form, as the config spelled them, not re-spelled from the typed
// options: the KubeletConfiguration stays what it was.
func TopologyManagerPolicyOptions(p *planner.Partition) (map[string]string, error) {
	if _, err := p.Kubelet.TopologyPolicyOptions(); err != nil {
		return nil, fmt.Errorf("partition %s: topologyManagerPolicyOptions: %w", p.Name, err)
	}
	out := map[string]string{}
	maps.Copy(out, p.Kubelet.TopologyManagerOptions)
	return out, nil
}
