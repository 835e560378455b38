package transaction

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/slices/apply/host"
)

// containerd runs with KillMode=process: a restart must not kill the shims
// that keep the pods' containers running. So stopping it (or its slice)
// leaves the shims in its cgroup, and systemd keeps the slice loaded while
// they live (found by the e2e: containerd-shim-runc-v2 outlived remove).
// remove ends them; nothing of a partition outlives it.

// leftoverGrace bounds the wait for SIGKILLed processes to be gone.
const leftoverGrace = 5 * time.Second

// cgroupProcs are the processes of a unit's cgroup: the unified hierarchy
// on v2, systemd's named hierarchy on v1 and hybrid. A cgroup that is not
// there (any more) has none.
func cgroupProcs(root string, mode CgroupMode, cgroup string) ([]int, error) {
	base := "sys/fs/cgroup"
	if mode != CgroupV2 {
		base = path.Join(base, "systemd")
	}
	b, err := host.Root(root).ReadFile(path.Join(base, cgroup, "cgroup.procs"), host.MaxCgroupFile)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENODEV) {
		// Gone, or removed by systemd between open and read (ENODEV):
		// either way it holds no process (found by the e2e).
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s/cgroup.procs: %q is not a pid", cgroup, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// KillLeftovers SIGKILLs what is left in a stopped unit's cgroup and waits
// until it is empty. It reports the pids it killed.
func KillLeftovers(ctx context.Context, root string, mode CgroupMode, cgroup string) ([]int, error) {
	pids, err := cgroupProcs(root, mode, cgroup)
	if err != nil || len(pids) == 0 {
		return nil, err
	}
	for _, pid := range pids {
		if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
			return pids, fmt.Errorf("killing pid %d left in %s: %w", pid, cgroup, err)
		}
	}
	deadline := time.Now().Add(leftoverGrace)
	for {
		left, err := cgroupProcs(root, mode, cgroup)
		if err != nil {
			return pids, err
		}
		if len(left) == 0 {
			return pids, nil
		}
		if time.Now().After(deadline) {
			return pids, fmt.Errorf("pids %v are still in %s %s after SIGKILL", left, cgroup, leftoverGrace)
		}
		select {
		case <-ctx.Done():
			return pids, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// runtimeControlDirs are where systemd keeps `set-property --runtime`
// drop-ins: of ordinary units, and of transient ones (init.scope).
var runtimeControlDirs = []string{"run/systemd/system.control", "run/systemd/transient"}

// Leftover is something a slice (for remove, also the network) leaves
// outside its unit files, and how to remove it.
type Leftover struct {
	What   string
	Remove func() error
}

// SliceLeftovers are what systemd and the kernel keep of a slice apply
// set up beyond its files: the runtime drop-ins of its AllowedCPUs= and
// AllowedMemoryNodes=, and on v1 its cpuset and hugetlb groups.
func SliceLeftovers(root string, mode CgroupMode, unit string) []Leftover {
	var out []Leftover
	for _, dir := range runtimeControlDirs {
		for _, prop := range []string{"AllowedCPUs", "AllowedMemoryNodes"} {
			rel := path.Join(dir, unit+".d", "50-"+prop+".conf")
			if host.Exists(root, rel) {
				out = append(out, Leftover{"drop runtime " + prop + " of " + unit, func() error { return host.RemoveFile(root, rel) }})
			}
		}
	}
	if mode != CgroupV2 {
		if g := cpusetV1Group(root, sliceCgroup(unit)); g.exists() {
			out = append(out, Leftover{"remove the cpuset v1 group of " + unit, g.remove})
		}
		if d := hugetlbV1Dir(sliceCgroup(unit)); dirExists(root, d) {
			out = append(out, Leftover{"remove the hugetlb v1 group of " + unit, func() error { return removeV1Group(root, d) }})
		}
	}
	return out
}
