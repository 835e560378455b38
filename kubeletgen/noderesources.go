package kubeletgen

import (
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

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
	r.WholeMachine = mach.WholeMachineWhy
	if !mach.ShownHostCPUs.IsEmpty() {
		r.ShownHostCPUs = mach.ShownHostCPUs.String()
	}
	k, err := readReservations(plan, p)
	if err != nil {
		return r, err
	}
	s := resourceSheet{r: &r, p: p, mach: mach, view: hasView(mach.Nodes)}
	s.cpu(k.cpus)
	s.memory(k.memory)
	s.hugepages()
	if err := s.ephemeralStorage(k.config); err != nil {
		return r, err
	}
	sort.Strings(r.Mismatches)
	return r, nil
}

// reservations are what the rendered KubeletConfiguration, read back as
// kubelet reads it, keeps from the Node: Resources computes allocatable
// from them, so a rendering that reserves differently shows as a mismatch.
type reservations struct {
	config *kubeletv1beta1.KubeletConfiguration
	// cpus are reservedSystemCPUs.
	cpus bitmask.CPUSet
	// memory is kubeReserved, systemReserved and the memory.available
	// eviction threshold together: kubelet subtracts all three.
	memory uint64
}

// readReservations renders p's KubeletConfiguration and reads back what
// it reserves.
func readReservations(plan *planner.Plan, p *planner.Partition) (reservations, error) {
	c, err := Config(plan, p)
	if err != nil {
		return reservations{}, err
	}
	k := reservations{config: c}
	if k.cpus, err = bitmask.ParseCPUList(c.ReservedSystemCPUs); err != nil {
		return reservations{}, fmt.Errorf("reservedSystemCPUs: %w", err)
	}
	for _, val := range []string{c.KubeReserved["memory"], c.SystemReserved["memory"], c.EvictionHard["memory.available"]} {
		b, err := units.ParseBytes(val)
		if err != nil {
			return reservations{}, fmt.Errorf("memory reservation %q: %w", val, err)
		}
		k.memory += b
	}
	return k, nil
}

// resourceSheet fills a NodeResources resource by resource, each with
// kubelet's own formula, so that each formula reads on its own.
type resourceSheet struct {
	r    *NodeResources
	p    *planner.Partition
	mach Machine
	// view is true when kubelet is shown the hugepage view: only the
	// partition's own nodes hold pages (hasView).
	view bool
}

// put writes one resource's capacity, allocatable and share, and a
// mismatch when kubelet would offer other than the partition's share.
func (s resourceSheet) put(name string, capacity, allocatable, share *resource.Quantity) {
	r := s.r
	r.Capacity[name], r.Allocatable[name], r.Share[name] = capacity.String(), allocatable.String(), share.String()
	if allocatable.Cmp(*share) != 0 {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("%s: allocatable %s, share %s", name, allocatable, share))
	}
}

func cpuQuantity(n int) *resource.Quantity { return resource.NewQuantity(int64(n), resource.DecimalSI) }

func byteQuantity(b uint64) *resource.Quantity {
	return resource.NewQuantity(int64(b), resource.BinarySI)
}

// cpu: kubelet counts the online CPUs the nodes it sees list and offers
// those outside reservedSystemCPUs.
func (s resourceSheet) cpu(reserved bitmask.CPUSet) {
	kubeletCPUs := s.mach.CPUs
	s.put(string(corev1.ResourceCPU), cpuQuantity(kubeletCPUs.Len()), cpuQuantity(kubeletCPUs.Len()-reserved.Len()), cpuQuantity(s.p.CPUs.Len()))
}

// memory: MemTotal minus the hugepages kubelet sees minus kube, system
// and eviction reservations (reserved); the share is the memory of the
// partition's own nodes outside their pools and the kubelet's reservation
// placed on them.
func (s resourceSheet) memory(reserved uint64) {
	var memTotal, seenHuge, ownShare uint64
	for _, m := range s.mach.Nodes {
		memTotal += m.TotalBytes
		seenHuge += seenHugepageBytes(s.p, m, s.view)
		if s.p.Nodes.Has(m.Node) {
			ownShare += m.TotalBytes - HugepageBytes(m) - m.ReservedBytes
		}
	}
	s.put(string(corev1.ResourceMemory), byteQuantity(memTotal), byteQuantity(memTotal-seenHuge-reserved), byteQuantity(ownShare))
}

// hugepages: one resource per page size any node knows or pools, each the
// pages kubelet sees, none reserved.
func (s resourceSheet) hugepages() {
	for _, size := range s.pageSizes() {
		var seen, own uint64
		for _, m := range s.mach.Nodes {
			seen += size * seenPages(s.p, m, size, s.view)
			own += size * seenPages(s.p, m, size, true) // the view is the share
		}
		name := corev1.ResourceHugePagesPrefix + resource.NewQuantity(int64(size), resource.BinarySI).String()
		s.put(name, byteQuantity(seen), byteQuantity(seen), byteQuantity(own))
	}
}

// pageSizes are the page sizes of every node kubelet sees, ascending:
// those the node supports and those it has a pool of.
func (s resourceSheet) pageSizes() []uint64 {
	sizes := map[uint64]bool{}
	for _, m := range s.mach.Nodes {
		for _, size := range m.PageSizes {
			sizes[size] = true
		}
		for _, h := range m.Hugepages {
			sizes[h.PageSize] = true
		}
	}
	var sorted []uint64
	for size := range sizes {
		sorted = append(sorted, size)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return sorted
}

// ephemeralStorage: the filesystem of the root dir minus systemReserved
// and the nodefs.available threshold; none when the plan has no share.
func (s resourceSheet) ephemeralStorage(c *kubeletv1beta1.KubeletConfiguration) error {
	es := s.p.EphemeralStorage
	if es == nil {
		return nil
	}
	reservedES, err := strconv.ParseUint(c.SystemReserved["ephemeral-storage"], 10, 64)
	if err != nil {
		return fmt.Errorf("systemReserved ephemeral-storage %q: %w", c.SystemReserved["ephemeral-storage"], err)
	}
	capacity := es.CapacityBytes
	s.put(string(corev1.ResourceEphemeralStorage), byteQuantity(capacity), byteQuantity(capacity-reservedES-es.EvictionBytes), byteQuantity(es.ShareBytes))
	return nil
}
