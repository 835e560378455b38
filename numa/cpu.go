package numa

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

const cpuDir = "devices/system/cpu"

// maxKernelCPUs is the largest NR_CPUS a kernel can be built with:
// 8192 on x86_64 (NR_CPUS_RANGE_END with CPUMASK_OFFSTACK, MAXSMP) and
// powerpc, less on every other architecture. No kernel writes a CPU id
// at or above it in any list or mask (they are nr_cpu_ids wide).
const maxKernelCPUs = 8192

// cpuBound is the CPU ids a kernel can name: 0..limit-1.
type cpuBound struct {
	limit int            // 0: no bound read (bitmask.MaxCPUs applies)
	ids   bitmask.CPUSet // 0..limit-1
	why   string         // what sets the limit, for errors
}

// check refuses a set naming a CPU the kernel cannot have: a list
// claiming more (0-65535 in an edited dump) is not the machine's.
func (b cpuBound) check(set bitmask.CPUSet) error {
	if b.limit == 0 {
		return nil
	}
	if beyond := set.Difference(b.ids); !beyond.IsEmpty() {
		return fmt.Errorf("CPUs %s: %s", beyond, b.why)
	}
	return nil
}

// readCPUBound is the bound of the dumped kernel: kernel_max
// (NR_CPUS - 1, as lscpu reads it) when the file exists, else
// maxKernelCPUs (lscpu assumes 2048 for a dump without it and drops
// CPUs beyond silently; discovery refuses them, naming the file).
func (f FS) readCPUBound() (cpuBound, error) {
	path := f.path(cpuDir, "kernel_max")
	kmax, ok, err := f.readInt(path, 0, maxKernelCPUs-1)
	if err != nil {
		return cpuBound{}, fmt.Errorf("%w (NR_CPUS - 1: no kernel has more than %d CPUs)", err, maxKernelCPUs)
	}
	b := cpuBound{limit: maxKernelCPUs,
		why: fmt.Sprintf("no kernel has CPU ids at or above %d (NR_CPUS is at most %d on every architecture)", maxKernelCPUs, maxKernelCPUs)}
	if ok {
		b.limit = int(kmax) + 1
		b.why = fmt.Sprintf("beyond %s/kernel_max (%d): this kernel has at most %d CPUs", cpuDir, kmax, b.limit)
	}
	b.ids, err = bitmask.ParseCPUList("0-" + strconv.Itoa(b.limit-1))
	return b, err
}

// cpuSets are the machine-wide CPU sets of devices/system/cpu.
type cpuSets struct {
	online, offline, possible, present bitmask.CPUSet
	dirs                               []int // cpuN directories, ascending
}

// readCPUSets reads online/offline/possible/present. Old kernels and some
// snapshot tools have none of them; then the cpuN directories are the
// present CPUs and cpuN/online (absent for a CPU that cannot be offlined)
// says which are online. Each assumption is a warning.
func (f FS) readCPUSets(w *warnings) (cpuSets, error) {
	var cs cpuSets
	// One listing of cpu/ bounds everything read per CPU below.
	limit := bitmask.MaxCPUs
	if f.cpus.limit > 0 {
		limit = f.cpus.limit
	}
	dirs, ok, err := f.idDirs(f.path(cpuDir), "cpu", limit)
	if err != nil {
		return cs, err
	}
	if !ok || len(dirs) == 0 {
		return cs, fmt.Errorf("%s: no cpuN directories: %s is not a sysfs root", f.path(cpuDir), f.root)
	}
	cs.dirs = dirs
	fromDirs := bitmask.NewCPUSet(dirs...)

	var found [4]bool
	for i, item := range []struct {
		name string
		set  *bitmask.CPUSet
	}{{"online", &cs.online}, {"offline", &cs.offline}, {"possible", &cs.possible}, {"present", &cs.present}} {
		*item.set, found[i], err = f.readCPUList(f.path(cpuDir, item.name))
		if err != nil {
			return cs, err
		}
	}
	onlineOK, offlineOK, possibleOK, presentOK := found[0], found[1], found[2], found[3]

	var missing []string
	if !presentOK {
		cs.present = fromDirs
		missing = append(missing, "present (taking the cpuN directories "+fromDirs.String()+")")
	}
	if !possibleOK {
		cs.possible = cs.present
		missing = append(missing, "possible (taking the present CPUs)")
	}
	if !onlineOK {
		cs.online, err = f.onlineFromDirs(dirs, w)
		if err != nil {
			return cs, err
		}
		missing = append(missing, "online (taking CPUs whose cpuN/online is absent or 1: "+cs.online.String()+")")
	}
	if len(missing) > 0 {
		w.add("%s: missing %s", cpuDir, strings.Join(missing, "; "))
	}
	if !offlineOK {
		cs.offline = cs.possible.Difference(cs.online)
	}
	if beyond := cs.offline.Difference(cs.possible); !beyond.IsEmpty() {
		w.add("%s/offline names CPUs %s that are not possible (possible: %s)", cpuDir, beyond, cs.possible)
	}
	// Every present CPU has its cpuN directory (the kernel registers the
	// device); a CPU a list names without one is not there. Discovery is
	// bounded by the directories, never by the range a file claims
	// (0-65535 on a 4-CPU dump made it try 655,000 files; readCPUBound
	// now refuses that list, but 0-8191 is a claim a kernel can make).
	if ghost := cs.present.Union(cs.online).Difference(fromDirs); !ghost.IsEmpty() {
		w.add("%s/present or online name CPUs %s that have no cpuN directory: they are not counted (the directories are %s)", cpuDir, ghost, fromDirs)
		cs.present = cs.present.Intersect(fromDirs)
		cs.online = cs.online.Intersect(fromDirs)
	}
	if odd := cs.online.Difference(cs.present); !odd.IsEmpty() {
		w.add("CPUs %s are online but not present; counting them as present", odd)
		cs.present = cs.present.Union(odd)
	}
	return cs, nil
}

// onlineFromDirs reads cpuN/online for each CPU directory. The file is
// absent for CPUs that cannot be offlined (often cpu0); an empty file is
// what some dump tools leave for a value they could not read. Both count
// as online, and the empty ones are reported.
func (f FS) onlineFromDirs(dirs []int, w *warnings) (bitmask.CPUSet, error) {
	var online, empty []int
	for _, id := range dirs {
		path := f.path(cpuDir, "cpu"+strconv.Itoa(id), "online")
		s, ok, err := f.read(path)
		if err != nil {
			return bitmask.CPUSet{}, err
		}
		switch {
		case !ok:
			online = append(online, id)
		case s == "":
			online = append(online, id)
			empty = append(empty, id)
		case s == "1":
			online = append(online, id)
		case s != "0":
			return bitmask.CPUSet{}, invalid(path, s, fmt.Errorf("want 0 or 1"))
		}
	}
	if len(empty) > 0 {
		w.add("cpuN/online is empty for CPUs %s (dump tool could not read it): taking them as online", bitmask.NewCPUSet(empty...))
	}
	return bitmask.NewCPUSet(online...), nil
}

// cpuTopology is what cpuN/topology says about one CPU.
type cpuTopology struct {
	pkg, core int
	siblings  bitmask.CPUSet
	// hasSiblings is false on kernels without thread_siblings(_list).
	hasSiblings bool
	// pkgSiblings is core_siblings(_list) (or package_cpus(_list)): the
	// sockets lscpu counts. Discovery uses it where the ids are missing
	// or -1 and otherwise only checks that it agrees with them (lscpu.go).
	pkgSiblings    bitmask.CPUSet
	hasPkgSiblings bool
	// noIDs is true when the CPU has neither physical_package_id nor
	// core_id, only the sibling masks (old kernels).
	noIDs bool
}

// readCPUTopology reads cpuN/topology; ok is false when the CPU has none
// (offline CPUs on current kernels) or lacks package or core id and the
// sibling masks that would replace them. An offline CPU that kept its
// files (old kernels) may have masks without itself: the kernel clears
// offline CPUs from the masks, so only an online CPU's must hold it.
func (f FS) readCPUTopology(id int, online bool, w *warnings) (cpuTopology, bool, error) {
	dir := f.path(cpuDir, "cpu"+strconv.Itoa(id), "topology")
	var t cpuTopology
	// physical_package_id is -1 on PowerVM and large and sparse on
	// Kunpeng and Itanium; any int32 is kept as it is.
	pkg, pkgOK, err := f.readInt(dir+"/physical_package_id", math.MinInt32, math.MaxInt32)
	if err != nil {
		return t, false, err
	}
	core, coreOK, err := f.readInt(dir+"/core_id", math.MinInt32, math.MaxInt32)
	if err != nil {
		return t, false, err
	}
	if pkgOK != coreOK {
		return t, false, nil
	}
	t.noIDs = !pkgOK
	t.pkg, t.core = int(pkg), int(core)
	if t.noIDs {
		t.pkg, t.core = -1, -1
	}
	t.siblings, t.hasSiblings, err = f.readSiblings(dir, threadSiblingFiles, w)
	if err != nil {
		return t, false, err
	}
	if online && t.hasSiblings && !t.siblings.Has(id) {
		return t, false, invalid(dir+"/thread_siblings_list", t.siblings.String(), fmt.Errorf("the siblings of cpu%d do not include cpu%d", id, id))
	}
	t.pkgSiblings, t.hasPkgSiblings, err = f.readSiblings(dir, packageSiblingFiles, w)
	if err != nil {
		return t, false, err
	}
	if online && t.hasPkgSiblings && !t.pkgSiblings.Has(id) {
		return t, false, invalid(dir+"/core_siblings_list", t.pkgSiblings.String(), fmt.Errorf("the package siblings of cpu%d do not include cpu%d", id, id))
	}
	if t.noIDs && (!t.hasSiblings || !t.hasPkgSiblings) {
		return t, false, nil
	}
	return t, true, nil
}

// Sibling masks, each as (list file, mask file), in the order they are
// tried: the old names first, then the ones newer kernels use.
var (
	threadSiblingFiles  = [][2]string{{"thread_siblings_list", "thread_siblings"}, {"core_cpus_list", "core_cpus"}}
	packageSiblingFiles = [][2]string{{"core_siblings_list", "core_siblings"}, {"package_cpus_list", "package_cpus"}}
)

// readSiblings reads the first of files that a CPU's topology directory
// has (the list, else the mask of old kernels).
func (f FS) readSiblings(dir string, files [][2]string, w *warnings) (bitmask.CPUSet, bool, error) {
	for _, names := range files {
		set, ok, mismatch, err := f.readCPUs(dir+"/"+names[0], dir+"/"+names[1])
		if err != nil {
			return bitmask.CPUSet{}, false, err
		}
		if mismatch != "" {
			w.add("%s", mismatch)
		}
		if ok {
			return set, true, nil
		}
	}
	return bitmask.CPUSet{}, false, nil
}
