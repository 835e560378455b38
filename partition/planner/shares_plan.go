package planner

import (
	"fmt"

	"github.com/numa-partition/numa-partition/numa/units"
)

// planShares gives each partition its ephemeral-storage and pid shares
// (shares.go) from the host's facts, and the host what is left of them.
func (pl *planning) planShares() {
	facts, plan := pl.facts, pl.plan
	if facts == nil {
		return // NewPlan: a plan of the topology alone (tests, config init)
	}
	hostCPUs := uint64(plan.Host.ReservedCPUs.Len())
	pl.planStorage(hostCPUs)
	pl.planPIDs(hostCPUs)
}

func (pl *planning) planStorage(hostCPUs uint64) {
	c, facts, plan, perPart, col := pl.c, pl.facts, pl.plan, pl.perPart, pl.col
	root, err := facts.Filesystem("/")
	if err != nil {
		col.Add("", "the filesystem of /: %v", err)
		return
	}
	type onFS struct {
		fs    Filesystem
		parts []int
	}
	var order []*onFS
	byDevice := map[uint64]*onFS{}
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		fs, err := facts.Filesystem(p.Kubelet.RootDir)
		if err != nil {
			col.Add("kubelet.root_dir", "partition %s: the filesystem of %s: %v", p.Name, p.Kubelet.RootDir, err)
			continue
		}
		g := byDevice[fs.Device]
		if g == nil {
			g = &onFS{fs: fs}
			byDevice[fs.Device] = g
			order = append(order, g)
		}
		g.parts = append(g.parts, i)
	}
	host := parseShare(col, "host.reserved_ephemeral_storage", c.Host.ReservedEphemeralStorage, false)
	for _, g := range order {
		eviction := NodefsEviction(g.fs.CapacityBytes)
		claims := make([]*claim, 0, len(g.parts)+1)
		for _, i := range g.parts {
			p, s := &plan.Partitions[i], perPart[i]
			claims = append(claims, &claim{name: p.Name, weight: uint64(p.CPUs.Len()),
				spec: parseShare(col, s.key["ephemeral_storage"], s.k.EphemeralStorage, false)})
		}
		withHost := g.fs.Device == root.Device
		if withHost {
			claims = append(claims, &claim{name: "host", spec: host, weight: hostCPUs})
		}
		what := fmt.Sprintf("ephemeral-storage on the filesystem of %s (%s, less kubelet's %d%% nodefs.available)",
			g.fs.Path, units.FormatBytes(g.fs.CapacityBytes), NodefsEvictionPercent)
		split(col, what, g.fs.CapacityBytes, g.fs.CapacityBytes-eviction, 1<<20, claims)
		for j, i := range g.parts {
			p := &plan.Partitions[i]
			share := StorageShare{Filesystem: g.fs, SharedWith: []string{}, EvictionBytes: eviction, ShareBytes: claims[j].share}
			share.SystemReservedBytes = g.fs.CapacityBytes - eviction - share.ShareBytes
			for _, other := range claims {
				if other.name != p.Name {
					share.SharedWith = append(share.SharedWith, other.name)
				}
			}
			p.EphemeralStorage = &share
		}
		if withHost {
			plan.Host.Shares.EphemeralStorageBytes = claims[len(claims)-1].share
		}
	}
}

func (pl *planning) planPIDs(hostCPUs uint64) {
	c, facts, plan, perPart, col := pl.c, pl.facts, pl.plan, pl.perPart, pl.col
	limit, err := facts.TaskLimit()
	if err != nil {
		col.Add("", "the host's pid limit: %v", err)
		return
	}
	claims := make([]*claim, 0, len(plan.Partitions)+1)
	for i := range plan.Partitions {
		p, s := &plan.Partitions[i], perPart[i]
		claims = append(claims, &claim{name: p.Name, weight: uint64(p.CPUs.Len()),
			spec: parseShare(col, s.key["pids"], s.k.PIDs, true)})
	}
	claims = append(claims, &claim{name: "host", weight: hostCPUs,
		spec: parseShare(col, "host.reserved_pids", c.Host.ReservedPIDs, true)})
	split(col, fmt.Sprintf("pids (the host's limit is %d)", limit), limit, limit, 1, claims)
	for i := range plan.Partitions {
		plan.Partitions[i].PIDs = &PIDShare{Limit: limit, Share: claims[i].share, SystemReserved: limit - claims[i].share}
	}
	plan.Host.Shares.PIDs = claims[len(claims)-1].share
}
