package planner

import (
	"fmt"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/numa-partition/numa-partition/internal/echo"
	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
	"github.com/numa-partition/numa-partition/partition/policy/memorymanager"
)

// CheckPlanFile refuses a plan read from a file (plan -o json, the
// rendered plan.json) that this build's planner would not have written:
// names, paths, ports, labels, the allocator's fields, the kubelet
// drop-ins, the kubelet's cgroup root and CPU Manager options and each
// node's memory, by the planner's own rules.
// Every plan read from a file passes it before anything uses it (the
// CLI's --plan files, the allocator daemon's plan: #38, a plan with
// stateDir "/etc", relative sockets or a node of 2^64-1 bytes was
// trusted, and a 4 Pi pod admitted), so that render and kubeletgen, like
// everything downstream of the planner, take a plan as decided and check
// nothing again.
func CheckPlanFile(plan *Plan) error {
	if len(plan.Partitions) == 0 {
		return fmt.Errorf("the plan has no partitions")
	}
	if msg := hostProblem(&plan.Host); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	if err := CheckPaths(plan); err != nil {
		return err
	}
	if err := CheckPorts(plan); err != nil {
		return err
	}
	if msg := planNetworkProblem(plan); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	if msg := hugepagesTwiceProblem(plan); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	seen := map[string]bool{}
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		if msg := validation.NameProblem(p.Name); msg != "" {
			return fmt.Errorf("%s", msg)
		}
		if seen[p.Name] {
			return fmt.Errorf("partition name %q is used twice", p.Name)
		}
		seen[p.Name] = true
		if msg := OwnLabelsProblem(p, plan.Hostname); msg != "" {
			return fmt.Errorf("%s", msg)
		}
		if msg := validation.SocketGroupProblem(p.Allocator.SocketGroup); msg != "" {
			return fmt.Errorf("partition %s: allocator.socketGroup %s", p.Name, msg)
		}
		if a := p.Allocator; a.NRIPlugin != "" && a.NRIPlugin != NRIPluginName(p.Name) {
			return fmt.Errorf("partition %s: allocator.nriPlugin %q must be %q", p.Name, a.NRIPlugin, NRIPluginName(p.Name))
		}
		if msg := kubeletArgsProblem(p); msg != "" {
			return fmt.Errorf("partition %s: %s", p.Name, msg)
		}
		if msg := runtimeProblem(p); msg != "" {
			return fmt.Errorf("partition %s: %s", p.Name, msg)
		}
		if p.Slice != p.Name+".slice" {
			return fmt.Errorf("partition %s: slice %q must be %q", p.Name, p.Slice, p.Name+".slice")
		}
		if p.Nodes.Len() == 0 {
			return fmt.Errorf("partition %s has no NUMA nodes", p.Name)
		}
		if want := CgroupRoot(p.Name); p.Kubelet.CgroupRoot != want {
			return fmt.Errorf("partition %s: kubelet cgroupRoot %q must be %q: its pods must nest in the partition's slice", p.Name, p.Kubelet.CgroupRoot, want)
		}
		if msg := validation.MaxPodsProblem(p.Kubelet.MaxPods); msg != "" {
			return fmt.Errorf("partition %s: kubelet.maxPods %s", p.Name, msg)
		}
		if msg := StrictCPUReservationProblem(&p.Kubelet); msg != "" {
			return fmt.Errorf("partition %s: cpuManagerPolicyOptions strict-cpu-reservation %s", p.Name, msg)
		}
		if err := CheckDropIns(p); err != nil {
			return err
		}
		if msg := storageShareProblem(p.EphemeralStorage); msg != "" {
			return fmt.Errorf("partition %s: ephemeralStorage.%s", p.Name, msg)
		}
		for _, m := range p.Memory {
			if msg := nodeMemoryProblem(m); msg != "" {
				return fmt.Errorf("partition %s: memory of node %d: %s", p.Name, m.Node, msg)
			}
		}
	}
	return nil
}

// kubeletArgsProblem is the planner's rules for what a plan file puts on
// its kubelet's command line beside its paths (CheckPaths): the Node
// name (validatePlan), each label and all of them as one argument
// (checkLabels) and the extra arguments (checkExtraArgs), "" when they
// hold. With them, every argument render writes there is one a unit's
// command line carries (validation.ArgProblem). An empty Node name, which
// the planner never writes, leaves kubelet's own (no --hostname-override),
// as render always did.
func kubeletArgsProblem(p *Partition) string {
	if p.NodeName != "" {
		if msgs := k8svalidation.IsDNS1123Subdomain(p.NodeName); len(msgs) > 0 {
			return fmt.Sprintf("nodeName %q: %s", echo.Value(p.NodeName), msgs[0])
		}
	}
	for _, k := range sortedKeys(p.Labels) {
		if msgs := validation.LabelProblems(k, p.Labels[k]); len(msgs) > 0 {
			return "labels: " + msgs[0]
		}
	}
	if msg := labelsArgProblem(p); msg != "" {
		return "labels: " + msg
	}
	if msgs := validation.ExtraArgsProblems(p.Kubelet.ExtraArgs); len(msgs) > 0 {
		return "kubelet.extraArgs: " + msgs[0]
	}
	return ""
}

// runtimeProblem is the planner's rules for a plan file's runtime: its
// kind one of the two the planner writes (checkRuntime's runtime.mode),
// its sandbox image an image reference (sandboxImageProblem), and the
// allocator plugged into its own containerd's NRI socket
// (planAllocatorModes), "" when they hold.
func runtimeProblem(p *Partition) string {
	rt, a := p.Runtime, p.Allocator
	switch rt.Kind {
	case RuntimeContainerd, RuntimeShared:
	default:
		return fmt.Sprintf("runtime.kind %q: allowed are %q (the partition's own containerd) and %q", echo.Value(string(rt.Kind)), RuntimeContainerd, RuntimeShared)
	}
	if msg := sandboxImageProblem(rt.SandboxImage); msg != "" {
		return "runtime.sandboxImage " + msg
	}
	if nri := hostpaths.NRISocket(rt.StateDir); rt.Kind == RuntimeContainerd && a.NRISocket != "" && a.NRISocket != nri {
		return fmt.Sprintf("allocator.nriSocket %q is not its containerd's NRI socket (allowed: %s, in runtime.stateDir)", echo.Value(a.NRISocket), nri)
	}
	return ""
}

// hugepagesTwiceProblem is the planner's rule of one entry per node and
// page size (hugepagesPlan, host.hugepages) for a plan file's pools, in a
// partition's memory, two partitions' or the excluded nodes': the
// hugepages oneshot and apply set each pool once, "" when none is
// planned twice.
func hugepagesTwiceProblem(plan *Plan) string {
	seen := map[[2]uint64]bool{}
	twice := func(ms []NodeMemory) (int, uint64) {
		for _, m := range ms {
			for _, h := range m.Hugepages {
				key := [2]uint64{uint64(m.Node), h.PageSize}
				if seen[key] {
					return m.Node, h.PageSize
				}
				seen[key] = true
			}
		}
		return -1, 0
	}
	const allowed = "allowed: one entry per node and page size"
	for _, p := range plan.Partitions {
		if node, size := twice(p.Memory); node >= 0 {
			return fmt.Sprintf("partition %s: memory of node %d: hugepages of %s are planned twice (%s)", p.Name, node, units.FormatBytes(size), allowed)
		}
	}
	if node, size := twice(plan.Host.ExcludedMemory); node >= 0 {
		return fmt.Sprintf("host.excludedMemory: node %d: hugepages of %s are planned twice (%s)", node, units.FormatBytes(size), allowed)
	}
	return ""
}

// hostProblem is the planner's rule for what the host keeps (a CPU list
// of at least one CPU, host.reserved_cpus; a memory node, newHost) for
// the host of a plan file, "" when it holds.
func hostProblem(h *Host) string {
	switch {
	case h.ReservedCPUs.IsEmpty():
		return "host.reservedCPUs is empty: systemd, sshd and the runtimes need at least one CPU (allowed: a CPU list of one CPU or more)"
	case h.MemoryNodes.IsEmpty():
		return "host.memoryNodes is empty: the host's own processes need memory (allowed: a list of one NUMA node with memory or more)"
	}
	return ""
}

// maxNodeBytes is the most memory a node has (the allocator's bound).
const maxNodeBytes = memorymanager.MaxBytes

// nodeMemoryProblem is the planner's capacity rule (checkNodeCapacity)
// for a node of a plan file: its hugepages and reservation fit its
// memory, and what it holds, counted in bytes, fits 64 bits; a node of
// unknown size (0) has no hugepages.
func nodeMemoryProblem(m NodeMemory) string {
	switch {
	case m.Node < 0 || m.Node >= bitmask.MaxNodes:
		return fmt.Sprintf("node id %d is not one a kernel has (0-%d)", m.Node, bitmask.MaxNodes-1)
	case m.TotalBytes > maxNodeBytes:
		return fmt.Sprintf("totalBytes %d is more than 4Pi, the most memory x86-64 and arm64 address", m.TotalBytes)
	}
	used := m.ReservedBytes
	for _, h := range m.Hugepages {
		switch {
		case h.PageSize < 4<<10 || h.PageSize&(h.PageSize-1) != 0:
			return fmt.Sprintf("page size %d is not a power of two of at least 4Ki", h.PageSize)
		case h.ReservedCount > h.Count:
			return fmt.Sprintf("%d reserved %s pages of %d", h.ReservedCount, units.FormatBytes(h.PageSize), h.Count)
		case h.Count > (^uint64(0)-used)/h.PageSize:
			return fmt.Sprintf("%d pages of %s and the reservation are more than 16Ei", h.Count, units.FormatBytes(h.PageSize))
		}
		used += h.Count * h.PageSize
	}
	switch {
	case m.TotalBytes == 0 && used > m.ReservedBytes:
		return "hugepages on a node of unknown size"
	case m.TotalBytes != 0 && used > m.TotalBytes:
		return fmt.Sprintf("hugepages and reservation %s exceed its memory %s", units.FormatBytes(used), units.FormatBytes(m.TotalBytes))
	}
	return ""
}

// storageShareProblem is the planner's arithmetic of an ephemeral-storage
// share (planStorageShares): kubelet's nodefs.available threshold taken
// from the capacity as kubelet takes it (NodefsEviction), and the share
// and systemReserved adding up to the rest, "" when it holds. kubeletgen
// takes the figures as they are.
func storageShareProblem(s *StorageShare) string {
	if s == nil {
		return ""
	}
	if want := NodefsEviction(s.CapacityBytes); s.EvictionBytes != want {
		return fmt.Sprintf("evictionBytes %d must be %d, kubelet's %d%% nodefs.available of capacityBytes %d", s.EvictionBytes, want, NodefsEvictionPercent, s.CapacityBytes)
	}
	rest := s.CapacityBytes - s.EvictionBytes
	if s.ShareBytes > rest || s.SystemReservedBytes != rest-s.ShareBytes {
		return fmt.Sprintf("shareBytes %d and systemReservedBytes %d must add up to capacityBytes %d less evictionBytes %d", s.ShareBytes, s.SystemReservedBytes, s.CapacityBytes, s.EvictionBytes)
	}
	return ""
}
