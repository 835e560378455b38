// Package kubeletstate reads the checkpoint kubelet's CPU Manager keeps in
// its root dir (cpu_manager_state) and repairs the one state kubelet 1.37
// cannot start from.
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
