package kubeletgen

import (
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// NodeResources is what partition p's kubelet will publish on its Node,
// resource by resource, next to the partition's share: computed with
// kubelet's own formulas from what it will be shown (machine.go: the
// CPUs its nodes list, their MemTotal, the hugepage view) and from the rendered
// KubeletConfiguration, so `plan` says before apply what the scheduler
// will see. Mismatches name the resources whose allocatable differs from
// the share (none, when the derivation holds).
type NodeResources struct {
	Partition   string            `json:"partition"`
	NodeName    string            `json:"nodeName"`
	Capacity    map[string]string `json:"capacity"`
	Allocatable map[string]string `json:"allocatable"`
	Share       map[string]string `json:"share"`
	Mismatches  []string          `json:"mismatches"`
	// WholeMachine says why its kubelet is shown the whole machine, so
	// that its capacity is the machine's ("" when it is shown its
	// partition: machine.go).
	WholeMachine string `json:"wholeMachine,omitempty"`
	// ShownHostCPUs are the host's CPUs its kubelet is shown on its
	// nodes and reserves (machine.go: a static CPU Manager with no
	// host CPU on its own nodes); capacity cpu counts them.
	ShownHostCPUs string `json:"shownHostCPUs,omitempty"`
}

// Resources computes partition p's NodeResources.
func Resources(plan *planner.Plan, p *planner.Partition) (NodeResources, error) {
	r := NodeResources{Partition: p.Name, NodeName: p.NodeName,
		Capacity: map[string]string{}, Allocatable: map[string]string{}, Share: map[string]string{}, Mismatches: []string{}}
	mach, err := MachineOf(plan, p)
	if err != nil {
		return r, err
	}
	all := mach.Nodes
	r.WholeMachine = mach.WholeMachineWhy
	if !mach.ShownHostCPUs.IsEmpty() {
		r.ShownHostCPUs = mach.ShownHostCPUs.String()
	}
	// The rendered KubeletConfiguration, read back as kubelet reads it.
	c, err := Config(plan, p)
	if err != nil {
		return r, err
	}
	reserved, err := bitmask.ParseCPUList(c.ReservedSystemCPUs)
	if err != nil {
		return r, fmt.Errorf("reservedSystemCPUs: %w", err)
	}
	var kube, system, eviction uint64
	for _, f := range []struct {
		dst *uint64
		val string
	}{{&kube, c.KubeReserved["memory"]}, {&system, c.SystemReserved["memory"]}, {&eviction, c.EvictionHard["memory.available"]}} {
		if *f.dst, err = units.ParseBytes(f.val); err != nil {
			return r, fmt.Errorf("memory reservation %q: %w", f.val, err)
		}
	}
	view := hasView(all)

	// cpu: kubelet counts the online CPUs the nodes it sees list and
	// offers those outside reservedSystemCPUs.
	kubeletCPUs := mach.CPUs
	put := func(name string, capacity, allocatable, share *resource.Quantity) {
		r.Capacity[name], r.Allocatable[name], r.Share[name] = capacity.String(), allocatable.String(), share.String()
		if allocatable.Cmp(*share) != 0 {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("%s: allocatable %s, share %s", name, allocatable, share))
		}
	}
	cpu := func(n int) *resource.Quantity { return resource.NewQuantity(int64(n), resource.DecimalSI) }
	put(string(corev1.ResourceCPU), cpu(kubeletCPUs.Len()), cpu(kubeletCPUs.Len()-reserved.Len()), cpu(p.CPUs.Len()))

	// memory: MemTotal minus the hugepages kubelet sees minus kube, system
	// and eviction reservations; hugepages: the pools it sees, none
	// reserved.
	var memTotal, seenHuge, ownShare uint64
	sizes := map[uint64]bool{}
	for _, m := range all {
		memTotal += m.TotalBytes
		seenHuge += seenHugepageBytes(p, m, view)
		for _, s := range m.PageSizes {
			sizes[s] = true
		}
		for _, h := range m.Hugepages {
			sizes[h.PageSize] = true
		}
		if p.Nodes.Has(m.Node) {
			ownShare += m.TotalBytes - HugepageBytes(m) - m.ReservedBytes
		}
	}
	bytes := func(b uint64) *resource.Quantity { return resource.NewQuantity(int64(b), resource.BinarySI) }
	put(string(corev1.ResourceMemory), bytes(memTotal), bytes(memTotal-seenHuge-kube-system-eviction), bytes(ownShare))
	var sorted []uint64
	for s := range sizes {
		sorted = append(sorted, s)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for _, size := range sorted {
		var seen, own uint64
		for _, m := range all {
			seen += size * seenPages(p, m, size, view)
			own += size * seenPages(p, m, size, true) // the view is the share
		}
		name := corev1.ResourceHugePagesPrefix + resource.NewQuantity(int64(size), resource.BinarySI).String()
		put(name, bytes(seen), bytes(seen), bytes(own))
	}

	// ephemeral-storage: the filesystem of the root dir minus
	// systemReserved and the nodefs.available threshold.
	if es := p.EphemeralStorage; es != nil {
		reservedES, err := strconv.ParseUint(c.SystemReserved["ephemeral-storage"], 10, 64)
		if err != nil {
			return r, fmt.Errorf("systemReserved ephemeral-storage %q: %w", c.SystemReserved["ephemeral-storage"], err)
		}
		capacity := es.CapacityBytes
		put(string(corev1.ResourceEphemeralStorage), bytes(capacity), bytes(capacity-reservedES-es.EvictionBytes), bytes(es.ShareBytes))
	}
	sort.Strings(r.Mismatches)
	return r, nil
}
