package planner

import (
	"math"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

const keyReservedCPUs = "host.reserved_cpus"

// reservedCPUs resolves host.reserved_cpus: "auto" (also when unset) or a
// CPU list. Offline CPUs in a list are kept out of partitions anyway, so
// naming them is only worth a warning.
func (pl *planning) reservedCPUs(value string, groups []group) bitmask.CPUSet {
	m, col, warn := pl.m, pl.col, pl.warn
	value = strings.TrimSpace(value)
	if value == "" || value == config.ReservedCPUsAuto {
		cpus := autoReservedCPUs(m, groups, warn)
		if cpus.IsEmpty() {
			col.Add(keyReservedCPUs, "\"auto\" found no core to reserve: every socket's first online core would leave a partition without CPUs, or discovery found no sockets; give a CPU list like \"0,4\"")
		} else if 4*cpus.Len() > m.online.Len() {
			warn("host.reserved_cpus = \"auto\" reserves %d of %d online CPUs (%s), one core per socket; give a CPU list to reserve fewer", cpus.Len(), m.online.Len(), cpus)
		}
		return cpus
	}
	cpus, err := bitmask.ParseCPUList(value)
	if err != nil {
		col.Add(keyReservedCPUs, "%q is neither \"auto\" nor a CPU list like \"0,4\" or \"0-1,32-33\": %v", value, err)
		return bitmask.CPUSet{}
	}
	if cpus.IsEmpty() {
		col.Add(keyReservedCPUs, "the host needs at least one CPU for systemd, sshd and the runtimes; use \"auto\" or a CPU list like \"0,4\"")
		return cpus
	}
	if extra := cpus.Difference(m.all); !extra.IsEmpty() {
		col.Add(keyReservedCPUs, "%q names CPUs %s that the machine does not have (it has %s)", value, extra, m.all)
	}
	if off := cpus.Intersect(m.all).Difference(m.online); !off.IsEmpty() {
		warn("host.reserved_cpus names offline CPUs %s; they are kept out of partitions but run nothing", off)
	}
	return cpus.Intersect(m.all)
}

// autoReservedCPUs is the first physical core of every socket with all its
// online SMT siblings, at most one core per partition: the seed recipe's
// CPUs 0 and 4 on 2×4 cores. The
// first core is the one holding the socket's lowest online CPU, since
// core_id is not unique or ordered on every machine. A core whose taking
// would leave a partition without CPUs is skipped (a one-core node of a
// multi-node socket, offline siblings), with a warning.
func autoReservedCPUs(m *machine, groups []group, warn func(string, ...any)) bitmask.CPUSet {
	sockets := append(m.t.Sockets[:0:0], m.t.Sockets...)
	// By lowest online CPU, so a partition of several sockets keeps the
	// core of its lowest CPU (CPU 0 is the host's on most machines).
	low := func(s numa.Socket) int {
		if ids := s.CPUs.Intersect(m.online).IDs(); len(ids) > 0 {
			return ids[0]
		}
		return math.MaxInt
	}
	sort.SliceStable(sockets, func(i, j int) bool {
		if li, lj := low(sockets[i]), low(sockets[j]); li != lj {
			return li < lj
		}
		return sockets[i].ID < sockets[j].ID
	})
	var out bitmask.CPUSet
	for _, s := range sockets {
		var first bitmask.CPUSet
		lowest := -1
		for _, c := range s.Cores {
			cpus := c.CPUs.Intersect(m.online)
			if cpus.IsEmpty() {
				continue
			}
			if low := cpus.IDs()[0]; lowest < 0 || low < lowest {
				lowest, first = low, cpus
			}
		}
		if first.IsEmpty() {
			// A socket without core records: take its lowest online CPU.
			if cpus := s.CPUs.Intersect(m.online); !cpus.IsEmpty() {
				first = bitmask.NewCPUSet(cpus.IDs()[0])
			}
		}
		// One core per partition is enough for the host: where a
		// partition holds several sockets (lscpu's logical sockets on
		// POWER and s390 LPARs, one per core), only its lowest is taken.
		if g := holder(m, groups, first); g >= 0 && !m.cpusOf(groups[g].nodes).Intersect(out).IsEmpty() {
			continue
		}
		if g := starved(m, groups, out.Union(first)); g >= 0 {
			warn("host.reserved_cpus = \"auto\": socket %d's first core %s is not reserved, it would leave nodes %s without CPUs", s.ID, first, groups[g].nodes)
			continue
		}
		out = out.Union(first)
	}
	return out
}

// holder is the group whose nodes hold cpus, or -1.
func holder(m *machine, groups []group, cpus bitmask.CPUSet) int {
	for i, g := range groups {
		if !m.cpusOf(g.nodes).Intersect(cpus).IsEmpty() {
			return i
		}
	}
	return -1
}

// starved is the first group left with no CPU by reserving cpus, or -1.
func starved(m *machine, groups []group, cpus bitmask.CPUSet) int {
	for i, g := range groups {
		own := m.cpusOf(g.nodes)
		if !own.IsEmpty() && own.Difference(cpus).IsEmpty() {
			return i
		}
	}
	return -1
}
