// Package apply puts a rendered Bundle on a host, transactionally, through
// systemd's D-Bus API, and reports (Status) and undoes (Remove) it.
//
// The work is split the functional-core way: Gather reads the host (files,
// unit states, hugepages, cgroup mode) into a Current; Plan, a pure
// function of (Desired, Current), turns the difference into an ordered list
// of Steps; an Executor runs the steps with an undo journal and, on any
// failure, rolls the host back to the files and unit states it found.
//
// Step order (one place, Plan):
//
//  1. stop, then disable, units of the previous generation that are gone
//  2. write changed files atomically (temp file, fsync, rename), delete obsolete ones
//  3. daemon-reload, only when a file changed
//  4. allocate hugepages per node, read back
//  5. start slices, set their CPUs/memory nodes live (runtime properties;
//     on cgroup v1 also their cpuset v1 group)
//  6. enable, then start or restart changed services by phase: hugepages
//     oneshot, runtime, allocator, kubelet, each waiting for its job result
//  7. record the applied generation (file hashes, units, slices) in
//     /var/lib/numa-partition/applied.json
package apply
