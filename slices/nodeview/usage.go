// Package nodeview shows each partition's kubelet its partition as the
// machine. This file is the usage half: kubelet's node usage (the summary
// API's node CPU and memory, what metrics-server's `kubectl top node`,
// dashboards and the eviction manager's memory.available read) is
// cAdvisor's root container "/", whose figures come from the root
// cgroup's own files. In the partition's mount namespace the same files
// of the partition's slice are bound read-only over them: the kernel
// serves them live, so every kubelet's root reads its slice (its pods,
// containerd, kubelet and allocator) and nothing else.
//
// On cgroup v2, runc's cgroup library, inside cAdvisor, opens every file
// of the unified hierarchy with openat2's RESOLVE_NO_XDEV from
// /sys/fs/cgroup, so it refuses a bound file (EXDEV; kubelet then
// reported a node CPU and working set of 0, measured in the e2e). Where
// openat2 does not exist (kernels before 5.6) the library opens by path
// and only checks that the file is a cgroup file system's, which a bound
// slice file is: the kubelet's unit makes openat2 answer ENOSYS
// (SystemCallFilter=, render's kubelet unit) and its first ExecStartPre=
// checks that it does (CheckOpenat2Hidden). docs/architecture.md, "Each
// kubelet's machine", says why this and not a cgroup namespace.
//
// The unified binds are made only when the holder is told (--unified):
// a kubelet unit rendered before this, without the filter, would read 0.
//
// Which files: what runc's cgroup library reads for a cgroup's stats,
// each controller's usage and stat files. A file missing at either end
// (the other cgroup version, a controller not mounted, no swap
// accounting, PSI off) is skipped: the kubelet then reads the host's
// figure there, as before.
package nodeview

import (
	"path"
	"slices"
)

// CgroupRoot is where the cgroup hierarchies are mounted.
const CgroupRoot = "sys/fs/cgroup"

// v1Files are those of each v1 controller, by controller directory.
// "cpu" and "cpuacct" are the links systemd makes to their shared
// "cpu,cpuacct" directory (or the directories themselves elsewhere).
var v1Files = map[string][]string{
	"cpu": {"cpu.stat"},
	"cpuacct": {"cpuacct.stat", "cpuacct.usage", "cpuacct.usage_percpu", "cpuacct.usage_all",
		"cpuacct.usage_user", "cpuacct.usage_sys", "cpuacct.usage_percpu_user", "cpuacct.usage_percpu_sys"},
	"memory": {"memory.stat", "memory.usage_in_bytes", "memory.max_usage_in_bytes", "memory.failcnt",
		"memory.memsw.usage_in_bytes", "memory.memsw.max_usage_in_bytes", "memory.memsw.failcnt",
		"memory.kmem.usage_in_bytes", "memory.kmem.max_usage_in_bytes", "memory.kmem.failcnt",
		"memory.numa_stat"},
	"blkio": {"blkio.throttle.io_service_bytes", "blkio.throttle.io_serviced",
		"blkio.io_service_bytes_recursive", "blkio.io_serviced_recursive"},
}

// v2Files are those of the unified hierarchy that the root cgroup has
// too (it has no memory.current: runc's library counts the root's usage
// as memory.stat's anon + file, and so the slice's there).
var v2Files = []string{"cpu.stat", "cpu.pressure", "memory.stat", "memory.numa_stat", "memory.pressure",
	"io.stat", "io.pressure"}

// Bind is one file of the view: Source, the partition's own, is bound
// over Target, the machine's. Both are relative to the host's root.
type Bind struct {
	Source, Target string
}

// UsageBinds are the binds that make slice (a top-level slice, such as
// node0.slice) the root of each cgroup v1 controller but those named in
// served (whose root files the holder serves itself: "memory", memcg.go),
// in a fixed order. Mount skips those whose ends do not exist on the
// host, which is all of them on a host with the unified hierarchy only.
func UsageBinds(slice string, served ...string) []Bind {
	var out []Bind
	for _, ctrl := range []string{"cpu", "cpuacct", "memory", "blkio"} {
		if slices.Contains(served, ctrl) {
			continue
		}
		for _, f := range v1Files[ctrl] {
			out = append(out, Bind{Source: path.Join(CgroupRoot, ctrl, slice, f), Target: path.Join(CgroupRoot, ctrl, f)})
		}
	}
	return out
}

// UnifiedUsageBinds are the binds that make slice the root cgroup of the
// unified hierarchy, in a fixed order. Only for a kubelet whose unit
// hides openat2 (CheckOpenat2Hidden): any other reader through runc's
// cgroup library is refused the bound files and reads 0. Mount skips them
// on a v1 or hybrid host (whose unified hierarchy, at
// sys/fs/cgroup/unified, no kubelet reads usage from).
func UnifiedUsageBinds(slice string) []Bind {
	out := make([]Bind, 0, len(v2Files))
	for _, f := range v2Files {
		out = append(out, Bind{Source: path.Join(CgroupRoot, slice, f), Target: path.Join(CgroupRoot, f)})
	}
	return out
}
