package kubeletgen

import (
	"sort"
	"strconv"

	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// The hugepage view: what each kubelet is shown of the machine's pools.
//
// kubelet cannot reserve hugepages (systemReserved and kubeReserved take
// none, and hugepages-<size> reservedMemory must add up to their zero), so
// every kubelet that sees the machine's pools offers all of them, and
// kube-scheduler sends a pod to a partition whose own pages cannot hold
// it. What kubelet knows of the pools comes from cadvisor, which reads
// nr_hugepages of /sys/kernel/mm/hugepages/hugepages-<kB>kB and of
// /sys/devices/system/node/node<N>/hugepages/hugepages-<kB>kB and nothing
// else. kubelet runs in the partition's mount namespace, so render writes
// a file for each of those, which the kubelet's ExecStartPre= binds over
// it, read-only, in that namespace at every start (`view hugepages`,
// slices/nodeview/pools.go): the partition's own planned pages on its
// nodes, 0 on every other node, and their sum for the machine. The Node
// then offers exactly the partition's pages and its Memory Manager never
// counts another partition's. runc, in the same namespace, reads only
// which page sizes exist (the directories), which the view keeps.
//
// Every node has its files, whichever nodes the kubelet is shown
// (machine.go): one shown the whole machine binds them all.

// SysfsValue is one file of a partition's view: Path below /sys and the
// content the kubelet reads there.
type SysfsValue struct {
	Path  string
	Value string
}

// HugepageView is partition p's view of the hugepage pools, sorted by
// path. ok is false when the plan does not know every node's page sizes
// (a plan made before pageSizes existed, or a dump without hugepages):
// then no view is rendered and every kubelet sees the machine's pools.
func HugepageView(plan *planner.Plan, p *planner.Partition) (view []SysfsValue, ok bool, err error) {
	all, err := machineMemory(plan)
	if err != nil {
		return nil, false, err
	}
	if !hasView(all) {
		return nil, false, nil
	}
	global := map[uint64]uint64{} // page size → pages p sees machine-wide
	for _, m := range all {
		for _, size := range m.PageSizes {
			pages := seenPages(p, m, size, true)
			global[size] += pages
			view = append(view, SysfsValue{
				Path:  hostpaths.NodePoolRel(m.Node, size),
				Value: strconv.FormatUint(pages, 10),
			})
		}
	}
	for size, pages := range global {
		view = append(view, SysfsValue{
			Path:  hostpaths.GlobalPoolRel(size),
			Value: strconv.FormatUint(pages, 10),
		})
	}
	sort.Slice(view, func(i, j int) bool { return view[i].Path < view[j].Path })
	return view, true, nil
}

// hasView: every node's page sizes are known.
func hasView(all []planner.NodeMemory) bool {
	if len(all) == 0 {
		return false
	}
	for _, m := range all {
		if len(m.PageSizes) == 0 {
			return false
		}
	}
	return true
}

// seenPages is how many pages of size p's kubelet sees on node m: with
// the view, the planned count on p's own nodes and none on the others;
// without it, every node's planned pool.
func seenPages(p *planner.Partition, m planner.NodeMemory, size uint64, view bool) uint64 {
	if view && !p.Nodes.Has(m.Node) {
		return 0
	}
	for _, h := range m.Hugepages {
		if h.PageSize == size {
			return h.Count
		}
	}
	return 0
}

// seenHugepageBytes is the memory p's kubelet sees held by hugepages on
// node m: with the view, only p's own nodes hold any.
func seenHugepageBytes(p *planner.Partition, m planner.NodeMemory, view bool) uint64 {
	if view && !p.Nodes.Has(m.Node) {
		return 0
	}
	return HugepageBytes(m)
}
