package status

import (
	"time"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/slices/nodeview"
)

// Health is the overall verdict of status.
type Health string

// Health values; `status` exits 0, 1, 1, 0.
const (
	Healthy    Health = "healthy"
	Degraded   Health = "degraded"
	NotApplied Health = "not-applied"
	// Offline: a root no systemd runs on, read with no problem found in
	// what a tree holds; what only the live host knows was not read
	// (Options.Offline).
	Offline Health = "offline"
)

// Status is the live state of an applied generation. Its JSON form is the
// output of `status --output json` (docs/apply.md).
type Status struct {
	Health     Health            `json:"health"`
	Generation int               `json:"generation"`
	AppliedAt  time.Time         `json:"appliedAt,omitzero"`
	CgroupMode cgroupmode.Mode   `json:"cgroupMode"`
	Host       HostStatus        `json:"host"`
	Partitions []PartitionStatus `json:"partitions"`
	// Problems say why the health is not "healthy"; Drift lists what
	// differs from what was applied (each drift item is also a problem).
	Problems []string `json:"problems"`
	Drift    []string `json:"drift"`
	// Warnings are what does not make the health worse but an operator
	// should act on (a host holding more memory on a partition's nodes
	// than its reservation there, which that partition's kubelet cannot
	// see on cgroup v2).
	Warnings []string `json:"warnings,omitempty"`
	// Offline, when status read a root no systemd runs on, says what it
	// could not read there.
	Offline string `json:"offline,omitempty"`
	// Config compares the config with the plan applied, on a live host
	// with an applied generation and a config file (the CLI fills it: it
	// plans).
	Config *ConfigReview `json:"config,omitempty"`
}

// ConfigReview says whether the config, planned on this host now, is the
// plan applied. Only that plan is live: the boot's numa-partition.service
// applies it and refuses a config edited since, so an edit waits, unseen
// on the host, until apply takes it.
type ConfigReview struct {
	Path string `json:"path"` // the config file
	// State is "applied" (the config plans the applied plan, the
	// machine's moving figures aside: a reboot's), "changed" (it plans
	// otherwise: not live until apply takes it) or "error" (it does not
	// plan, or the applied plan file could not be read: Error says).
	State ConfigState `json:"state"`
	// Change is where the applied plan file first differs from the
	// config's plan, and Changes how many lines do ("changed").
	Change  string `json:"change,omitempty"`
	Changes int    `json:"changes,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ConfigState is ConfigReview's verdict.
type ConfigState string

// ConfigState values.
const (
	ConfigApplied ConfigState = "applied"
	ConfigChanged ConfigState = "changed"
	ConfigError   ConfigState = "error"
)

// HostStatus is the host's share.
type HostStatus struct {
	// ReservedCPUs is what the plan reserved; InForce is system.slice's
	// AllowedCPUs as systemd holds it now.
	ReservedCPUs string      `json:"reservedCPUs"`
	InForce      string      `json:"reservedCPUsInForce"`
	Units        []UnitState `json:"units"`
	Nodes        []NodeState `json:"nodes"`
}

// PartitionStatus is one partition.
type PartitionStatus struct {
	Name  string      `json:"name"`
	Slice string      `json:"slice"`
	Units []UnitState `json:"units"`
	// EffectiveCPUs and EffectiveMems are read from the slice's cgroup
	// files (cpuset.cpus.effective on v2, the cpuset v1 group on v1).
	EffectiveCPUs string      `json:"effectiveCPUs"`
	EffectiveMems string      `json:"effectiveMems"`
	Kubelet       Probe       `json:"kubelet"`
	Allocator     Probe       `json:"allocator"`
	Nodes         []NodeState `json:"nodes"`
	// Network is the partition's namespace as it is now (namespace mode).
	Network *NetworkStatus `json:"network,omitempty"`
	// Node is the partition's Kubernetes Node, read from the API server.
	Node NodeStatus `json:"node"`
	// Usage is the partition's CPU time and memory as its kubelet reports
	// them for its Node: on cgroup v1 read in the partition's namespace as
	// kubelet reads them (its slice's CPU time, and the memory of the NUMA
	// nodes it is shown or else its slice's: slices/nodeview); on v2, where
	// kubelet still reads the host's, the slice's own. UsageError says why
	// it was not read.
	Usage      *nodeview.Usage `json:"usage,omitempty"`
	UsageError string          `json:"usageError,omitempty"`
	// Machine is the machine its kubelet is shown, read in the
	// partition's mount namespace (its Node's capacity); MachineError
	// says why it was not read. Neither without a namespace of its own.
	Machine      *nodeview.Machine `json:"machine,omitempty"`
	MachineError string            `json:"machineError,omitempty"`
	// HostMemoryBytes is, on cgroup v2, the memory on the partition's
	// nodes that is neither free, nor hugepages, nor its slice's: the
	// host's and the kernel's, which its kubelet does not count
	// (nodeview.HostMemoryOn). HostMemoryError says why it was not read.
	HostMemoryBytes *uint64 `json:"hostMemoryBytes,omitempty"`
	HostMemoryError string  `json:"hostMemoryError,omitempty"`
	// Daemons is what the partition's own running services (its kubelet,
	// containerd, allocator and mount namespace holder: Units) use
	// together, against the memory its kubelet reserves for them; nil
	// when none was read.
	Daemons *DaemonsUsage `json:"daemons,omitempty"`
}

// DaemonsUsage is the price of a partition's own services on the host.
type DaemonsUsage struct {
	// CPUNanoseconds, MemoryWorkingSetBytes and MemoryAnonBytes are the
	// sums of the running services' usage (UnitState.Usage).
	CPUNanoseconds        uint64 `json:"cpuNanoseconds"`
	MemoryWorkingSetBytes uint64 `json:"memoryWorkingSetBytes"`
	MemoryAnonBytes       uint64 `json:"memoryAnonBytes"`
	// KubeReservedMemoryBytes is the partition's kube_reserved_memory,
	// which its kubelet keeps out of the pods' allocatable for them; nil
	// when the record predates it. Status warns when they use more.
	KubeReservedMemoryBytes *uint64 `json:"kubeReservedMemoryBytes,omitempty"`
}

// NetworkStatus is a partition's network namespace: what was applied and
// what the kernel has.
type NetworkStatus struct {
	Namespace string `json:"namespace"`
	Interface string `json:"interface"`
	// Address is the applied address; Addresses what the interface has.
	Address   string   `json:"address"`
	Present   bool     `json:"present"` // the namespace is mounted
	Up        bool     `json:"up"`      // its interface exists and is up
	Addresses []string `json:"addresses"`
	// Devices are the host's devices applied to the namespace and
	// whether it holds each now.
	Devices []DeviceStatus `json:"devices,omitempty"`
}

// DeviceStatus is a device a partition's namespace should hold.
type DeviceStatus struct {
	Name string `json:"name"`
	PCI  string `json:"pci"`
	// InNamespace: the namespace holds it (else it is on the host, in a
	// pod's namespace, or gone).
	InNamespace bool `json:"inNamespace"`
}

// UnitState is a unit's state.
type UnitState struct {
	Name        string `json:"name"`
	ActiveState string `json:"activeState"`
	SubState    string `json:"subState"`
	Enabled     string `json:"unitFileState"`
	// Usage is a running partition service's own CPU time and memory (its
	// cgroup's, as nodeview reads a slice's): what a partition's kubelet,
	// containerd, allocator and holder cost the host besides its pods.
	// UsageError says why it was not read.
	Usage      *nodeview.Usage `json:"usage,omitempty"`
	UsageError string          `json:"usageError,omitempty"`
}

// Probe is a health check's outcome.
type Probe struct {
	Endpoint string `json:"endpoint,omitempty"`
	OK       bool   `json:"ok"`
	Detail   string `json:"detail"`
}

// NodeState is one NUMA node's memory.
type NodeState struct {
	Node       int              `json:"node"`
	TotalBytes uint64           `json:"totalBytes"`
	FreeBytes  uint64           `json:"freeBytes"`
	Hugepages  []numa.Hugepages `json:"hugepages"`
}
