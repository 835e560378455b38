package apply

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// CgroupMode is how the host mounts cgroups.
type CgroupMode string

// Cgroup modes, as systemd names them.
const (
	// CgroupV2 (unified): systemd enforces AllowedCPUs=/AllowedMemoryNodes=.
	CgroupV2 CgroupMode = "unified"
	// CgroupHybrid: v1 controllers plus a cgroup2 mount without them; the
	// cpuset controller is on v1, so systemd does not enforce cpusets.
	CgroupHybrid CgroupMode = "hybrid"
	// CgroupV1 (legacy): likewise.
	CgroupV1 CgroupMode = "legacy"
)

// DetectCgroupMode looks at root/sys/fs/cgroup the way systemd does.
func DetectCgroupMode(root string) (CgroupMode, error) {
	base := filepath.Join(root, "sys/fs/cgroup")
	var st unix.Statfs_t
	if err := unix.Statfs(base, &st); err != nil {
		return "", fmt.Errorf("detecting the cgroup mode: %w", err)
	}
	switch st.Type {
	case unix.CGROUP2_SUPER_MAGIC:
		return CgroupV2, nil
	case unix.TMPFS_MAGIC:
	default:
		return "", fmt.Errorf("detecting the cgroup mode: %s is neither cgroup2 nor a tmpfs of v1 hierarchies (fs type %#x)", base, st.Type)
	}
	if err := unix.Statfs(filepath.Join(base, "unified"), &st); err == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return CgroupHybrid, nil
	}
	return CgroupV1, nil
}

// CgroupWarning is the one warning about cgroup v1 hosts.
func CgroupWarning(m CgroupMode) string {
	if m == CgroupV2 {
		return ""
	}
	return fmt.Sprintf("cgroup mode %s: systemd does not enforce the slices' AllowedCPUs=/AllowedMemoryNodes= here; "+
		"numa-partition enforces them through the slices' cpuset v1 groups and CPUAffinity=/NUMAPolicy=bind/NUMAMask= "+
		"on the partition services. Kubernetes >= 1.35 needs cgroup v2 (systemd.unified_cgroup_hierarchy=1)", m)
}

// sliceCgroup is the cgroup path systemd gives a slice: "a-b.slice" lives
// in "/a.slice/a-b.slice".
func sliceCgroup(name string) string {
	if name == "-.slice" {
		return "/"
	}
	base := strings.TrimSuffix(name, ".slice")
	parts := strings.Split(base, "-")
	var p string
	for i := range parts {
		p += "/" + strings.Join(parts[:i+1], "-") + ".slice"
	}
	return p
}

// cpusetV1 is one cpuset v1 group under root.
type cpusetV1 struct{ dir string }

func cpusetV1Group(root, cgroup string) cpusetV1 {
	return cpusetV1{dir: filepath.Join(root, "sys/fs/cgroup/cpuset", cgroup)}
}

func (c cpusetV1) exists() bool {
	_, err := os.Stat(filepath.Join(c.dir, "cpuset.cpus"))
	return err == nil
}

func (c cpusetV1) read(file string) (string, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// set creates the group if needed and writes cpus and mems (in that
// order: a v1 group needs both before it takes tasks).
func (c cpusetV1) set(cpus, mems string) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("cpuset v1: %w", err)
	}
	for _, kv := range [][2]string{{"cpuset.cpus", cpus}, {"cpuset.mems", mems}} {
		if err := os.WriteFile(filepath.Join(c.dir, kv[0]), []byte(kv[1]), 0o644); err != nil {
			return fmt.Errorf("cpuset v1: %w", err)
		}
	}
	return nil
}

// remove moves the group's tasks to its parent and removes it.
func (c cpusetV1) remove() error {
	if !c.exists() {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("cpuset v1: %w", err)
	}
	parent := filepath.Join(filepath.Dir(c.dir), "cgroup.procs")
	var errs []error
	for _, pid := range strings.Fields(string(b)) {
		if err := os.WriteFile(parent, []byte(pid), 0o644); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(c.dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cpuset v1: removing %s: %w", c.dir, err)
	}
	return nil
}

// attach moves every process of a unit's cgroup (read from the name=systemd
// or unified hierarchy) into the group.
func (c cpusetV1) attach(root, unitCgroup string) (int, error) {
	var procs []byte
	var err error
	for _, h := range []string{"systemd", "unified"} {
		procs, err = os.ReadFile(filepath.Join(root, "sys/fs/cgroup", h, unitCgroup, "cgroup.procs"))
		if err == nil {
			break
		}
	}
	if err != nil {
		return 0, fmt.Errorf("cpuset v1: reading the processes of %s: %w", unitCgroup, err)
	}
	n := 0
	for _, pid := range strings.Fields(string(procs)) {
		if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(pid), 0o644); err != nil {
			if errors.Is(err, unix.ESRCH) {
				continue // exited meanwhile
			}
			return n, fmt.Errorf("cpuset v1: moving pid %s of %s to %s: %w", pid, unitCgroup, c.dir, err)
		}
		n++
	}
	return n, nil
}
