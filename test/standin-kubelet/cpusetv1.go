package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"golang.org/x/sys/unix"
)

// joinCpusetV1 does on a cgroup v1 host what runc's systemd driver does for
// the controllers systemd does not manage there (cpuset among them): it
// creates the container's cgroup in the cpuset hierarchy at the same path
// as its systemd unit, each missing level initialised from its parent
// (a v1 cpuset group starts empty), narrows the leaf to cpus when set, and
// moves the process in. Parents numa-partition created for the partition
// slice (cpuset v1 groups with the partition's CPUs and memory nodes)
// thereby confine the pod. It does nothing on a unified (v2) host, where
// systemd applies the cpuset itself.
func joinCpusetV1(cgroupRoot, unitCgroup string, pid int, cpus bitmask.CPUSet, setCPUs bool) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(cgroupRoot, &st); err != nil {
		return false, fmt.Errorf("cgroup mode: %w", err)
	}
	if st.Type == unix.CGROUP2_SUPER_MAGIC {
		return false, nil
	}
	hier := filepath.Join(cgroupRoot, "cpuset")
	if _, err := os.Stat(filepath.Join(hier, "cpuset.cpus")); err != nil {
		return false, fmt.Errorf("cgroup v1 host without a cpuset hierarchy at %s: %w", hier, err)
	}
	dir := hier
	for _, part := range strings.Split(strings.Trim(unitCgroup, "/"), "/") {
		parent := dir
		dir = filepath.Join(dir, part)
		if _, err := os.Stat(filepath.Join(dir, "cpuset.cpus")); err == nil {
			continue
		}
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return false, fmt.Errorf("cpuset v1: %w", err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(parent, f))
			if err != nil {
				return false, fmt.Errorf("cpuset v1: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return false, fmt.Errorf("cpuset v1: initialising %s: %w", filepath.Join(dir, f), err)
			}
		}
	}
	if setCPUs {
		if err := os.WriteFile(filepath.Join(dir, "cpuset.cpus"), []byte(cpus.String()), 0o644); err != nil {
			return false, fmt.Errorf("cpuset v1: pod cpus %s (outside its parent's?): %w", cpus, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return false, fmt.Errorf("cpuset v1: moving pod %d into %s: %w", pid, dir, err)
	}
	return true, nil
}
