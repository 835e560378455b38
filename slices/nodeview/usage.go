// Package nodeview shows each partition's kubelet its partition as the
// machine. This file is the usage half: kubelet's node usage (the summary
// API's node CPU and memory, what metrics-server's `kubectl top node`,
// dashboards and the eviction manager's memory.available read) is
// cAdvisor's root container "/", whose figures come from the root
// cgroup's own files. Bound read-only over them, in the partition's
// mount namespace, are the same files of the partition's slice: the
// kernel serves them live, so the root of every kubelet reads its slice,
// its pods, containerd, kubelet and allocator, and nothing else.
//
// Which files: what runc's cgroup library, inside cAdvisor, reads for a
// cgroup's stats, on both versions. cgroup v2: cpu.stat (usage_usec,
// throttling), memory.stat (the root has no memory.current: its usage is
// memory.stat's anon + file, its working set that minus inactive_file),
// io.stat and the pressure files (kubelet's node PSI). cgroup v1: each
// controller's usage and stat files. A file that is missing at either
// end (the other cgroup version, a controller not mounted, PSI off) is
// skipped: the kubelet then reads the host's figure there, as before.
package nodeview

import "path"

// CgroupRoot is where the cgroup hierarchies are mounted.
const CgroupRoot = "sys/fs/cgroup"

// v2Files are the root cgroup's files cAdvisor reads for usage on the
// unified hierarchy.
var v2Files = []string{
	"cpu.stat", "memory.stat", "io.stat",
	"cpu.pressure", "memory.pressure", "io.pressure",
}

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

// Bind is one file of the view: Source, the partition's own, is bound
// over Target, the machine's. Both are relative to the host's root.
type Bind struct {
	Source, Target string
}

// UsageBinds are the binds that make slice (a top-level slice, such as
// node0.slice) the root cgroup, for both cgroup versions, in a fixed
// order; Mount skips those whose ends do not exist on the host.
func UsageBinds(slice string) []Bind {
	var out []Bind
	for _, f := range v2Files {
		out = append(out, Bind{Source: path.Join(CgroupRoot, slice, f), Target: path.Join(CgroupRoot, f)})
	}
	for _, ctrl := range []string{"cpu", "cpuacct", "memory", "blkio"} {
		for _, f := range v1Files[ctrl] {
			out = append(out, Bind{Source: path.Join(CgroupRoot, ctrl, slice, f), Target: path.Join(CgroupRoot, ctrl, f)})
		}
	}
	return out
}
