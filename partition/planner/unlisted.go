package planner

import (
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// Hugepages already there (#37). A partition's node may hold pages in a
// pool host.hugepages does not list: the kernel command line reserved
// them, or another tool. They cannot stay unplanned: kubelet's Memory
// Manager counts every page it finds, and the plan's reservations and
// each Node's resources assume the planned ones only, so the boot oneshot
// refused them and, every kubelet requiring it, no partition started.
// host.unlisted_hugepages decides at plan time instead, and says so:
// "free" plans the pool at 0 (apply and the oneshot free it, and refuse
// when its pages are in use), "adopt" at the count it holds.

// planUnlistedHugepages adds to pages (node → planned pools) every pool a
// node of nodes holds pages in and pages does not list, as the config's
// host.unlisted_hugepages says, with a warning naming it.
func (pl *planning) planUnlistedHugepages(pages map[int][]HugepagePlan, nodes bitmask.NodeSet) {
	policy := pl.c.Host.UnlistedHugepages
	switch policy {
	case "":
		policy = config.UnlistedFree
	case config.UnlistedFree, config.UnlistedAdopt:
	default:
		pl.col.Add("host.unlisted_hugepages", "%q: allowed are %q (plan them at 0: apply frees them, and fails on pages in use) and %q (plan them at the count they hold)",
			policy, config.UnlistedFree, config.UnlistedAdopt)
		return
	}
	for _, id := range nodes.IDs() {
		for _, h := range pl.m.node[id].Hugepages {
			if h.Total == 0 || plansPageSize(pages[id], h.PageSize) {
				continue
			}
			size := units.FormatBytes(h.PageSize)
			if policy == config.UnlistedAdopt {
				pl.warn("node %d holds %d pages of %s that host.hugepages does not list: adopted (host.unlisted_hugepages = %q), the plan keeps them and its partition's kubelet offers them to pods",
					id, h.Total, size, policy)
				pages[id] = append(pages[id], HugepagePlan{PageSize: h.PageSize, Count: h.Total})
				continue
			}
			pl.warn("node %d holds %d pages of %s that host.hugepages does not list: apply frees them (host.unlisted_hugepages = %q) and fails if any is in use (%d are now); to keep them, list them in host.hugepages or set host.unlisted_hugepages = %q",
				id, h.Total, size, policy, h.Total-min(h.Free, h.Total), config.UnlistedAdopt)
			pages[id] = append(pages[id], HugepagePlan{PageSize: h.PageSize, Count: 0})
		}
	}
}

func plansPageSize(pools []HugepagePlan, size uint64) bool {
	for _, p := range pools {
		if p.PageSize == size {
			return true
		}
	}
	return false
}
