// Package kubeletstate reads the checkpoints kubelet's CPU and Memory
// Managers keep in its root dir (cpu_manager_state, memory_manager_state)
// and repairs the two states kubelet 1.37 cannot start from.
//
// The Memory Manager's static policy checkpoints the machine as it counted
// it (each NUMA node's MemTotal and hugepage pools) and refuses to start
// when the machine is not that any more ("the expected machine state is
// different from the real one", kubernetes/kubernetes#131253): a reboot
// that moves a node's MemTotal by a few MiB, which the e2e's reboot found
// on both of its nodes, kept the partition's kubelet down until someone
// removed the file (memory.go).
//
// With the static policy and strict-cpu-reservation, which numa-partition
// renders for every kubelet-mode partition (the other partitions' and the
// host's CPUs are the kubelet's reserved CPUs), Guaranteed pods may take
// every CPU of the partition: kubelet then checkpoints an empty shared pool
// ("defaultCpuSet": "") beside their assignments, and at its next start its
// validateState refuses that checkpoint ("default cpuset cannot be empty",
// kubernetes/kubernetes#141196, open). A kubelet that crashes, is killed or
// restarted by a config change then never starts again, until someone
// removes the file. The e2e found it: a partition of one pod CPU, one
// Guaranteed pod, a kubelet killed, 30 restarts in a row.
package kubeletstate
