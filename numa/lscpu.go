package numa

import (
	"strconv"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// lscpu's rules for sockets and cores when sysfs has no usable ids, from
// util-linux 2.38 sys-utils/lscpu-topology.c and lscpu.c:
//
//   - cputype_read_topology walks the CPUs in ascending order and, for each
//     CPU with a thread_siblings file, adds its thread_siblings mask to
//     coremaps and its core_siblings mask to socketmaps with
//     add_cpuset_to_array, which keeps the first copy of each distinct mask.
//     "Socket(s)" is the number of socket masks; they need no ids at all.
//   - lscpu -p prints a CPU's logical SOCKET and CORE (__fill_id) as the
//     position of its masks in those lists; cores are numbered across the
//     whole machine, not per socket. --physical prints physical_package_id
//     and core_id instead, and "-" where they are negative (absent or -1).
//
// Discovery keeps the kernel's ids where every CPU has one, since they are
// also what kubelet's cAdvisor reads, and uses lscpu's logical numbering
// otherwise.

// maskNumbers numbers distinct CPU masks 0..N-1 in the order first seen,
// as add_cpuset_to_array does.
type maskNumbers map[string]int

func (m maskNumbers) of(mask bitmask.CPUSet) int {
	key := mask.String()
	n, ok := m[key]
	if !ok {
		n = len(m)
		m[key] = n
	}
	return n
}

// idsFromMasks replaces missing or negative package ids by lscpu's
// logical sockets. When any CPU lacks a package id, every CPU's socket is
// renumbered, not only the unknown ones: logical numbers would collide with
// the real ids otherwise, and the whole machine then reads as lscpu -p
// prints it. CPUs without core_id get lscpu's logical core; a core_id the
// kernel gave is kept. Without a socket mask on every CPU there is nothing
// to number by: the ids are kept and unknown packages form socket -1
// (buildSockets says so).
func idsFromMasks(ids []int, topo map[int]cpuTopology, w *warnings) {
	var unknown, noIDs, renumbered []int
	complete := true
	for _, id := range ids {
		ct, ok := topo[id]
		if !ok {
			continue
		}
		switch {
		case ct.noIDs:
			noIDs = append(noIDs, id)
		case ct.pkg < 0:
			unknown = append(unknown, id)
		default:
			renumbered = append(renumbered, id)
		}
		complete = complete && ct.hasPkgSiblings
	}
	if len(unknown) == 0 && len(noIDs) == 0 {
		checkIDsAgainstMasks(ids, topo, w)
		return
	}
	if !complete {
		return
	}
	sockets, cores := maskNumbers{}, maskNumbers{}
	for _, id := range ids {
		ct, ok := topo[id]
		if !ok {
			continue
		}
		ct.pkg = sockets.of(ct.pkgSiblings)
		if ct.hasSiblings {
			core := cores.of(ct.siblings)
			if ct.noIDs {
				ct.core = core
			}
		}
		topo[id] = ct
	}
	rule := "sockets are the distinct core_siblings masks, numbered 0.." + strconv.Itoa(len(sockets)-1) + " in the order of their lowest CPU, as lscpu does"
	if len(unknown) > 0 {
		w.add("physical_package_id is -1 (unknown, as on PowerVM, s390, SPARC) for CPUs %s: %s", bitmask.NewCPUSet(unknown...), rule)
	}
	if len(noIDs) > 0 {
		w.add("CPUs %s have no physical_package_id or core_id (old kernel): %s; their cores are the distinct thread_siblings masks, numbered across the machine (%d cores)", bitmask.NewCPUSet(noIDs...), rule, len(cores))
	}
	if len(renumbered) > 0 {
		w.add("CPUs %s have a physical_package_id but other CPUs do not: their sockets are renumbered by the same rule, so that socket numbers do not collide", bitmask.NewCPUSet(renumbered...))
	}
}

// checkIDsAgainstMasks warns when the package ids and the core_siblings
// masks describe different sockets; lscpu's "Socket(s)" counts the masks,
// so it then disagrees with discovery. The ids win: physical_package_id is
// the kernel's package as the firmware reports it and what kubelet's
// cAdvisor uses, while core_siblings is what the architecture code groups
// (a cluster or a cache domain on some kernels).
func checkIDsAgainstMasks(ids []int, topo map[int]cpuTopology, w *warnings) {
	pkgOf := map[string]int{} // socket mask → the package id of its CPUs
	packages := map[int]bool{}
	agree := true
	for _, id := range ids {
		ct, ok := topo[id]
		if !ok {
			continue
		}
		if !ct.hasPkgSiblings {
			return // nothing to compare with
		}
		packages[ct.pkg] = true
		key := ct.pkgSiblings.String()
		if pkg, seen := pkgOf[key]; seen && pkg != ct.pkg {
			agree = false
		}
		pkgOf[key] = ct.pkg
	}
	if agree && len(pkgOf) == len(packages) {
		return
	}
	w.add("sockets by physical_package_id: %d; by distinct core_siblings masks, which lscpu counts as Socket(s): %d; using physical_package_id, the kernel's package id, which kubelet's cAdvisor also reads", len(packages), len(pkgOf))
}
