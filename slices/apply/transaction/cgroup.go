package transaction

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/drift"
)

// CgroupMode is how the host mounts cgroups (package cgroupmode).
type CgroupMode = cgroupmode.Mode

// Cgroup modes, as systemd names them.
const (
	CgroupV2     = cgroupmode.V2
	CgroupHybrid = cgroupmode.Hybrid
	CgroupV1     = cgroupmode.V1
)

// DetectCgroupMode looks at root/sys/fs/cgroup the way systemd does.
func DetectCgroupMode(root string) (CgroupMode, error) {
	return cgroupmode.Detect(host.Root(root))
}

// CgroupWarning is the one warning about cgroup v1 hosts.
func CgroupWarning(m CgroupMode) string {
	if m == CgroupV2 {
		return ""
	}
	return fmt.Sprintf("cgroup mode %s: systemd does not enforce the slices' AllowedCPUs=/AllowedMemoryNodes= here; "+
		"numa-partition enforces them through the slices' cpuset v1 groups and CPUAffinity=/NUMAPolicy=bind/NUMAMask= "+
		"on the partition services. kubelet >= 1.35 runs on it only because every rendered KubeletConfiguration sets failCgroupV1: false; "+
		"Kubernetes keeps cgroup v1 in maintenance mode: move to cgroup v2 (systemd.unified_cgroup_hierarchy=1)", m)
}

// sliceCgroup is the cgroup path systemd gives a slice (drift.SliceCgroup,
// which the allocator daemon reads its slice with too).
func sliceCgroup(name string) string { return drift.SliceCgroup(name) }

// cpusetV1 is one cpuset v1 group under root (dir is root-relative).
type cpusetV1 struct{ root, dir string }

func cpusetV1Group(root, cgroup string) cpusetV1 {
	return cpusetV1{root: root, dir: path.Join("sys/fs/cgroup/cpuset", cgroup)}
}

func (c cpusetV1) exists() bool { return host.Exists(c.root, path.Join(c.dir, "cpuset.cpus")) }

func (c cpusetV1) read(file string) (string, error) {
	b, err := host.Root(c.root).ReadFile(path.Join(c.dir, file), host.MaxCgroupFile)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// set creates the group if needed and writes cpus and mems (in that
// order: a v1 group needs both before it takes tasks).
func (c cpusetV1) set(cpus, mems string) error {
	if err := host.Root(c.root).MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("cpuset v1: %w", err)
	}
	for _, kv := range [][2]string{{"cpuset.cpus", cpus}, {"cpuset.mems", mems}} {
		if err := host.WriteKernelFile(c.root, path.Join(c.dir, kv[0]), kv[1]); err != nil {
			return fmt.Errorf("cpuset v1: %w", err)
		}
	}
	return nil
}

// remove moves the tasks of the group and of every group below it (the
// pods' groups kubelet and runc made) to the group's parent and removes the
// groups, deepest first: rmdir of a v1 group with children is EBUSY.
func (c cpusetV1) remove() error {
	if !c.exists() {
		return nil
	}
	return removeV1Group(c.root, c.dir)
}

// hugetlbV1Dir is a cgroup's group in the hugetlb v1 hierarchy. kubelet
// refuses a cgroupRoot missing there; systemd does not manage hugetlb, so
// the kubelet unit's ExecStartPre creates it (slices/render/render.go) and
// remove takes it away with the pods' groups below it.
// (root-relative).
func hugetlbV1Dir(cgroup string) string {
	return path.Join("sys/fs/cgroup/hugetlb", cgroup)
}

// dirExists says whether rel below root is a directory (not a link).
func dirExists(root, rel string) bool {
	st, err := host.Root(root).Lstat(rel)
	return err == nil && st.IsDir()
}

// removeV1Group removes a v1 group and every group below it, moving their
// tasks to its parent; a group that is not there is no error.
func removeV1Group(root, dir string) error {
	if !host.Exists(root, dir) {
		return nil
	}
	if err := removeV1Tree(root, dir, path.Join(path.Dir(dir), "cgroup.procs")); err != nil {
		return fmt.Errorf("cgroup v1: removing %s: %w", host.Root(root).Path(dir), err)
	}
	return nil
}

func removeV1Tree(root, dir, dest string) error {
	r := host.Root(root)
	entries, err := r.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, removeV1Tree(root, path.Join(dir, e.Name()), dest))
		}
	}
	b, err := r.ReadFile(path.Join(dir, "cgroup.procs"), host.MaxCgroupFile)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, pid := range strings.Fields(string(b)) {
		if err := host.WriteKernelFile(root, dest, pid); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, err)
		}
	}
	if err := r.Remove(dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// attach moves every process of a unit's cgroup (read from the name=systemd
// or unified hierarchy) into the group.
func (c cpusetV1) attach(root, unitCgroup string) (int, error) {
	var procs []byte
	var err error
	for _, h := range []string{"systemd", "unified"} {
		procs, err = host.Root(root).ReadFile(path.Join("sys/fs/cgroup", h, unitCgroup, "cgroup.procs"), host.MaxCgroupFile)
		if err == nil {
			break
		}
	}
	if err != nil {
		return 0, fmt.Errorf("cpuset v1: reading the processes of %s: %w", unitCgroup, err)
	}
	n := 0
	for _, pid := range strings.Fields(string(procs)) {
		// Joining a v1 cpuset resets every thread's affinity to the
		// group's CPUs; the unit's CPUAffinity= (its daemon CPUs) must
		// survive the move, so it is read before and put back after.
		saved := threadAffinities(pid)
		if err := host.WriteKernelFile(c.root, path.Join(c.dir, "cgroup.procs"), pid); err != nil {
			if errors.Is(err, unix.ESRCH) {
				continue // exited meanwhile
			}
			return n, fmt.Errorf("cpuset v1: moving pid %s of %s to %s: %w", pid, unitCgroup, c.dir, err)
		}
		for tid, set := range saved {
			// The kernel keeps saved ∩ the group's CPUs; EINVAL means they
			// do not meet, and the group's CPUs are then the right answer.
			if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) && !errors.Is(err, unix.EINVAL) {
				return n, fmt.Errorf("cpuset v1: restoring the CPU affinity of pid %s (thread %d) after moving it to %s: %w", pid, tid, c.dir, err)
			}
		}
		n++
	}
	return n, nil
}

// threadAffinities reads the CPU affinity of every thread of a process
// (PIDs as this process sees them: the cgroup files are read through this
// process's pid namespace). Threads that exit meanwhile are skipped.
func threadAffinities(pid string) map[int]unix.CPUSet {
	out := map[int]unix.CPUSet{}
	tasks, err := os.ReadDir(filepath.Join("/proc", pid, "task"))
	if err != nil {
		return out
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		var set unix.CPUSet
		if unix.SchedGetaffinity(tid, &set) == nil {
			out[tid] = set
		}
	}
	return out
}
