package kubeletgen

import (
	"fmt"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// The machine view: which machine each kubelet is shown.
//
// cAdvisor, inside kubelet, takes everything a Node publishes of its
// machine from two places: the NUMA node directories of
// /sys/devices/system/node (the CPUs each lists, its meminfo, hugepage
// pools and distances: the Node's cpu capacity and the Topology, CPU and
// Memory Managers' NUMA nodes) and MemTotal of /proc/meminfo (the Node's
// memory capacity and the root container's limit that memory.available
// is measured against). In the partition's mount namespace the kubelet's
// first ExecStartPre= leaves its own nodes alone in
// /sys/devices/system/node (`numa-partition view nodes`: a tmpfs there,
// each own node's directory bound back) and the namespace's holder serves
// /proc/meminfo made of the nodes shown (`view hold --meminfo`,
// slices/nodeview). The Node's capacity is then the partition's: the
// CPUs of its nodes, their memory and their pages; and its managers never
// enumerate a node the partition cannot use.
//
// The cgroup mode must be known: kubelet measures memory.available as the
// root's memory limit (MemTotal) less the root cgroup's working set, so
// the root's usage files must be the partition's too, and how they are
// made differs (nodeview/usage.go): on v1 bound or served by the holder,
// on v2 bound, with openat2 hidden from kubelet (its cgroup library
// refuses a bound file through openat2). The partition's MemTotal less
// the host's working set would put the Node under MemoryPressure, or wrap
// around below zero (docs/architecture.md).
//
// A static CPU Manager refuses to start without a reserved CPU among those
// it counts. A partition with no host-reserved CPU on its own nodes is
// shown the host's CPUs too, listed by its first node with a CPU
// (ShownHostCPUs, nodeview/hostcpus.go): its kubelet reserves them and
// never hands them out, as it does the host's CPUs on a partition's own
// nodes. The alternatives were worse: reserving one of the partition's
// own CPUs costs it a CPU, and the whole machine makes every other node
// the kubelet's (its capacity, its memory.available, its managers' hints).
//
// Some partitions keep the whole machine, as before, and render says so:
// every one when the plan does not know the host's cgroup mode; one
// sharing a container runtime (the view is made in the partition's mount
// namespace, which only its own containerd has); a static one when the
// host reserves no CPU at all; and one from a plan that does not know the
// nodes' hugepage sizes.

// Machine is what partition p's kubelet is shown of the machine.
type Machine struct {
	// Partition is true when the kubelet sees the partition's own nodes
	// alone; false when it sees the whole machine.
	Partition bool
	// Nodes are the NUMA nodes it sees, ascending.
	Nodes []planner.NodeMemory
	// CPUs are the CPUs it counts: the online CPUs its nodes list.
	CPUs bitmask.CPUSet
	// ShownHostCPUs are host-reserved CPUs off the partition's nodes
	// that its kubelet is shown on them (and counts in CPUs), so that
	// its static CPU Manager has a CPU to reserve: every host-reserved
	// CPU, when none lies on the partition's nodes.
	ShownHostCPUs bitmask.CPUSet
	// WholeMachineWhy says why the kubelet sees the whole machine ("" when
	// it sees the partition).
	WholeMachineWhy string
	// HostMemoryUnseen is true when the memory the kubelet counts as used
	// on its nodes is its slice's alone (cgroup v2: the slice's
	// memory.stat is the root's, nodeview/usage.go), so the host's own
	// memory there, which its reservation covers, is not in its
	// memory.available (MemoryReservations).
	HostMemoryUnseen bool
}

// MachineOf decides partition p's Machine.
func MachineOf(plan *planner.Plan, p *planner.Partition) (Machine, error) {
	all, err := machineMemory(plan)
	if err != nil {
		return Machine{}, err
	}
	whole := Machine{Nodes: all, CPUs: onlineCPUs(plan).Difference(plan.Host.OrphanCPUs)}
	switch {
	case !knownMode(plan.Host.CgroupMode):
		whole.WholeMachineWhy = cgroupWhy(plan.Host.CgroupMode)
		return whole, nil
	case p.Runtime.Kind != planner.RuntimeContainerd:
		// The view is made in the partition's mount namespace, which
		// only a containerd of its own has.
		whole.WholeMachineWhy = "it shares a container runtime, so its kubelet runs in the host's mount namespace"
		return whole, nil
	case !hasView(all) && !noHugetlb(all):
		// kubelet's hugepage capacity is the machine-wide pools, which
		// only the hugepage view (hugepageview.go) makes the partition's:
		// without the sizes there is nothing to bind.
		whole.WholeMachineWhy = "the plan does not know every NUMA node's hugepage sizes (a plan made before pageSizes existed)"
		return whole, nil
	}
	m := Machine{Partition: true, CPUs: p.CPUs.Union(p.HostReservedCPUs),
		HostMemoryUnseen: plan.Host.CgroupMode == cgroupmode.V2}
	if p.Kubelet.CPUManagerPolicy == "static" && p.HostReservedCPUs.IsEmpty() {
		m.ShownHostCPUs = whole.CPUs.Intersect(plan.Host.ReservedCPUs)
		if m.ShownHostCPUs.IsEmpty() {
			whole.WholeMachineWhy = "the host reserves no CPU, and kubelet's static CPU Manager needs a reserved CPU among those it sees"
			return whole, nil
		}
		m.CPUs = m.CPUs.Union(m.ShownHostCPUs)
	}
	for _, n := range all {
		if p.Nodes.Has(n.Node) {
			m.Nodes = append(m.Nodes, n)
		}
	}
	return m, nil
}

// noHugetlb: no node has a hugepage size or a planned page (a machine
// whose kernel has no hugetlb): there are no pools to show.
func noHugetlb(all []planner.NodeMemory) bool {
	for _, m := range all {
		if len(m.PageSizes) > 0 || len(m.Hugepages) > 0 {
			return false
		}
	}
	return true
}

// cgroupWhy says why a host in cgroup mode m shows its kubelets the whole
// machine.
func cgroupWhy(m cgroupmode.Mode) string {
	if m == "" {
		return "the host facts do not say the cgroup mode, which decides how its usage is made the slice's"
	}
	return fmt.Sprintf("cgroup mode %q is none of %q, %q and %q", m, cgroupmode.V2, cgroupmode.Hybrid, cgroupmode.V1)
}

// knownMode: the usage view is made for each of these (nodeview/usage.go).
func knownMode(m cgroupmode.Mode) bool {
	return m == cgroupmode.V2 || m == cgroupmode.Hybrid || m == cgroupmode.V1
}
