// Package cgroupmode tells how a host mounts cgroups, the way systemd
// does: the one place for the rule, read at plan time (the host's facts)
// and at apply time.
package cgroupmode

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// Mode is how the host mounts cgroups, as systemd names it.
type Mode string

// Cgroup modes.
const (
	// V2 (unified): systemd enforces AllowedCPUs=/AllowedMemoryNodes=.
	V2 Mode = "unified"
	// Hybrid: v1 controllers plus a cgroup2 mount without them; the
	// cpuset controller is on v1, so systemd does not enforce cpusets.
	Hybrid Mode = "hybrid"
	// V1 (legacy): likewise.
	V1 Mode = "legacy"
)

// Detect looks at root's sys/fs/cgroup the way systemd does.
func Detect(root fsutil.Root) (Mode, error) {
	st, err := statfsIn(root, "sys/fs/cgroup")
	if err != nil {
		return "", fmt.Errorf("detecting the cgroup mode: %w", err)
	}
	switch st.Type {
	case unix.CGROUP2_SUPER_MAGIC:
		return V2, nil
	case unix.TMPFS_MAGIC:
	default:
		return "", fmt.Errorf("detecting the cgroup mode: %s is neither cgroup2 nor a tmpfs of v1 hierarchies (fs type %#x)", root.Path("sys/fs/cgroup"), st.Type)
	}
	if st, err := statfsIn(root, "sys/fs/cgroup/unified"); err == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return Hybrid, nil
	}
	return V1, nil
}

// statfsIn is statfs(2) of the directory rel below root.
func statfsIn(root fsutil.Root, rel string) (unix.Statfs_t, error) {
	var st unix.Statfs_t
	d, err := root.Open(rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return st, err
	}
	defer d.Close()
	if err := unix.Fstatfs(int(d.Fd()), &st); err != nil {
		return st, fmt.Errorf("statfs %s: %w", d.Name(), err)
	}
	return st, nil
}
