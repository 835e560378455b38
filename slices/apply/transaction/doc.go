// Package transaction is the host transaction of apply: it puts a
// rendered Bundle on a host through systemd's D-Bus API, rolling the host
// back on a failure, and gives remove the same steps, ownership checks
// and leftovers to undo it with.
//
// The work is split the functional-core way: Gather reads the host (files,
// unit states, hugepages, cgroup mode) into a Current; Plan, a pure
// function of (Desired, Current), turns the difference into an ordered list
// of Steps; an Executor runs the steps with an undo journal and, on any
// failure, rolls the host back to the files and unit states it found.
// WritePending writes the record ahead of the first change, so that a
// killed apply is finished or undone by the next.
//
// A kind of step is a type in its own file, step_*.go: its Kind, its words
// in the report, how it runs and how it is undone. Plan's phases (plan.go,
// one table) decide which steps are needed and in what order:
//
//  1. stop, then disable, units of the previous generation that are gone
//  2. write changed files atomically (temp file, fsync, rename), remove
//     obsolete ones, forget the runtime state of slices no longer planned
//  3. daemon-reload, only when a file changed; then remove the network
//     objects no longer planned
//  4. size the hugepage pools per node, read back
//  5. start slices, set their CPUs/memory nodes live (runtime properties;
//     on cgroup v1 also their cpuset v1 group)
//  6. enable, then start or restart changed services by phase: hugepages
//     oneshot (started, never restarted: step 4 did its work, and every
//     kubelet Requires= it; bundle.Unit.KeepOnChange), runtime, allocator,
//     kubelet, each waiting for its job result;
//     a kubelet whose managers' settings changed is stopped, its state
//     moved aside, and started; on cgroup v1 a started service joins its
//     partition's cpuset group
//  7. record the applied generation (file hashes, units, slices) in
//     /var/lib/numa-partition/applied.json
//
// It knows neither the apply and remove that call it (slices/apply) nor
// the Nodes' orchestration nor status (internal/importrules): what it
// decides goes up as data, its steps.
package transaction
