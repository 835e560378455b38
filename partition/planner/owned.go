package planner

// What the planner owns whatever the config says: the labels it puts on
// every Node, the CPU manager option it forces, the ports and slice
// names it keeps partitions off. The config's defaults are the config
// package's (config/defaults.go).

// Labels the plan puts on every partition's Node.
const (
	// LabelPartition names the partition on its Node object.
	LabelPartition = "numa-partition.io/partition"
	// LabelNUMAType carries the partition's colour, as the seed recipe did.
	LabelNUMAType = "numa-type"
	// LabelHost names the physical host the partition is on (the plan's
	// host name): the key for topologySpreadConstraints and anti-affinity
	// that must put replicas on different machines (one power supply,
	// one kernel), which kubernetes.io/hostname, one per partition, cannot.
	LabelHost = "numa-partition.io/host"
)

// defaultCPUManagerPolicyOptions: kubelet's CPU manager allocates from the
// whole machine (cadvisor reports every CPU), so the render reserves the
// complement of the partition; strict-cpu-reservation keeps best-effort
// and burstable pods off those CPUs too (see docs/spec/multi-kubelet-notes.md).
func defaultCPUManagerPolicyOptions() map[string]string {
	return map[string]string{"strict-cpu-reservation": "true"}
}

// wellKnownPorts are ports of components that run on a Kubernetes host;
// a partition's kubelet must not take them.
var wellKnownPorts = map[int]string{
	2379:  "etcd client",
	2380:  "etcd peer",
	6443:  "kube-apiserver",
	10249: "kube-proxy metrics",
	10256: "kube-proxy healthz",
	10257: "kube-controller-manager",
	10259: "kube-scheduler",
}
