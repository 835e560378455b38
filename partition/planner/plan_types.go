package planner

import (
	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// Plan is the pure result of Plan(topology, config): everything rendering
// needs, nothing read from the host afterwards. Its JSON form is the stable
// output of `numa-partition plan --output json` (documented in the README).
type Plan struct {
	Hostname   string      `json:"hostname"`
	Host       Host        `json:"host"`
	Partitions []Partition `json:"partitions"` // in index order
	Network    Network     `json:"network"`
	Warnings   []string    `json:"warnings"`
}

// Host is what the machine keeps for itself (system.slice, user.slice,
// init.scope and the per-partition runtimes' overhead).
type Host struct {
	ReservedCPUs bitmask.CPUSet `json:"reservedCPUs"`
	// MemoryNodes are the nodes the host's own processes may allocate from.
	MemoryNodes bitmask.NodeSet `json:"memoryNodes"`
	// ExcludedNodes are NUMA nodes left out of every partition on purpose.
	ExcludedNodes bitmask.NodeSet `json:"excludedNodes"`
	// OnlineCPUs are every online CPU of the machine: what kubelet (through
	// cadvisor) counts as capacity, so each kubelet's reservedSystemCPUs is
	// OnlineCPUs minus its partition's CPUs. Render falls back to the union
	// of the reserved and partition CPUs when empty.
	OnlineCPUs bitmask.CPUSet `json:"onlineCPUs"`
	// OrphanCPUs are the online CPUs no NUMA node lists (they stay with
	// the host). kubelet, through cadvisor, counts only CPUs that a node
	// lists, so they are in no kubelet's capacity or reservedSystemCPUs.
	OrphanCPUs bitmask.CPUSet `json:"orphanCPUs,omitzero"`
	// ExcludedMemory describes ExcludedNodes like Partition.Memory does:
	// every kubelet must reserve those nodes' memory entirely, and the
	// hugepages oneshot sets their page counts too.
	ExcludedMemory []NodeMemory `json:"excludedMemory,omitempty"`
	// Shares are what the host keeps of the filesystem of "/" and of the
	// pid space (zero without host facts).
	Shares HostShares `json:"shares"`
	// CgroupMode is how the host mounts cgroups ("" when the host facts
	// did not say): which machine each kubelet can be shown depends on
	// it (kubeletgen/machine.go).
	CgroupMode cgroupmode.Mode `json:"cgroupMode,omitempty"`
}

// Partition is one future Kubernetes Node.
type Partition struct {
	Index int    `json:"index"`
	Name  string `json:"name"`  // "node0": systemd slice name part, no '-' or '_'
	Slice string `json:"slice"` // "node0.slice"
	Color string `json:"color"` // "red", used for the default numa-type label

	Nodes bitmask.NodeSet `json:"nodes"` // NUMA nodes, CPU-less ones included
	// CPUs the partition's pods may use: its nodes' online CPUs minus the
	// host-reserved ones.
	CPUs bitmask.CPUSet `json:"cpus"`
	// HostReservedCPUs are the host-reserved CPUs that lie on this
	// partition's nodes (kubelet must not hand them out either).
	HostReservedCPUs bitmask.CPUSet  `json:"hostReservedCPUs"`
	MemoryNodes      bitmask.NodeSet `json:"memoryNodes"`

	// Memory describes each of the partition's nodes, ascending by node id.
	Memory []NodeMemory `json:"memory"`

	NodeName string            `json:"nodeName"`
	Labels   map[string]string `json:"labels"`
	Taints   []Taint           `json:"taints,omitempty"`

	// EphemeralStorage and PIDs are the partition's shares of the
	// filesystem under its kubelet root dir and of the host's pid space;
	// nil for plans made without host facts.
	EphemeralStorage *StorageShare `json:"ephemeralStorage,omitempty"`
	PIDs             *PIDShare     `json:"pids,omitempty"`

	// Network is the partition's namespace and address; nil when the
	// partitions share the host's (network.mode = "host").
	Network *PartitionNetwork `json:"network,omitempty"`
	// NodeDirs are the directories the partition has of its own at paths
	// every partition's agents use (namespace mode).
	NodeDirs []NodeDir `json:"nodeDirs,omitempty"`

	Kubelet   Kubelet   `json:"kubelet"`
	Runtime   Runtime   `json:"runtime"`
	Allocator Allocator `json:"allocator"`
}

// NodeMemory is one NUMA node's memory as the plan sees it. Reserved is
// what the host keeps on that node (kubelet's reservedMemory for this node,
// before foreign nodes are added); hugepages are what apply allocates.
type NodeMemory struct {
	Node          int            `json:"node"`
	TotalBytes    uint64         `json:"totalBytes"`
	ReservedBytes uint64         `json:"reservedBytes"`
	Hugepages     []HugepagePlan `json:"hugepages"` // ascending by page size
	// PageSizes are the hugepage sizes the node offers (bytes, ascending):
	// its sysfs pools, which render shows each kubelet with only its
	// partition's pages in them. Plans without them show every kubelet
	// the machine's pools.
	PageSizes []uint64 `json:"pageSizes,omitempty"`
}

// HugepagePlan is the count of pages of one size to allocate on one node.
type HugepagePlan struct {
	PageSize uint64 `json:"pageSize"` // bytes
	Count    uint64 `json:"count"`
	// ReservedCount pages of this size are kept from the partition's pods
	// (kubelet reservedMemory for hugepages-<size>).
	ReservedCount uint64 `json:"reservedCount"`
}

// Kubelet is everything one kubelet instance needs that must differ from
// its siblings, plus the policies chosen for it.
type Kubelet struct {
	Binary              string `json:"binary"`
	ConfigPath          string `json:"configPath"` // its KubeletConfiguration file
	RootDir             string `json:"rootDir"`
	CertDir             string `json:"certDir"`
	Kubeconfig          string `json:"kubeconfig"`
	BootstrapKubeconfig string `json:"bootstrapKubeconfig"`
	CgroupRoot          string `json:"cgroupRoot"` // "/node0": kubelet's systemd driver makes it node0.slice
	// DevicePluginsDir is bound at /var/lib/kubelet/device-plugins for this
	// kubelet and its runtime (kubelet hard-codes that path).
	DevicePluginsDir string `json:"devicePluginsDir"`
	PodLogsDir       string `json:"podLogsDir"`
	StaticPodPath    string `json:"staticPodPath,omitempty"`

	Port         int `json:"port"`
	HealthzPort  int `json:"healthzPort"`
	ReadOnlyPort int `json:"readOnlyPort"` // 0 = disabled
	MaxPods      int `json:"maxPods"`

	CPUManagerPolicy        string            `json:"cpuManagerPolicy"`    // none | static
	MemoryManagerPolicy     string            `json:"memoryManagerPolicy"` // None | Static
	TopologyManagerPolicy   string            `json:"topologyManagerPolicy"`
	TopologyManagerScope    string            `json:"topologyManagerScope"`
	TopologyManagerOptions  map[string]string `json:"topologyManagerOptions,omitempty"`
	CPUManagerPolicyOptions map[string]string `json:"cpuManagerPolicyOptions,omitempty"`

	// Host-level reservations kubelet must account for (kubeReserved,
	// systemReserved, evictionHard memory.available), in bytes.
	KubeReservedMemory   uint64 `json:"kubeReservedMemory"`
	SystemReservedMemory uint64 `json:"systemReservedMemory"`
	EvictionHardMemory   uint64 `json:"evictionHardMemory"`

	ExtraArgs []string `json:"extraArgs,omitempty"`

	// ClusterDNS and ClusterDomain go into every pod's resolv.conf.
	ClusterDNS    []string `json:"clusterDNS,omitempty"`
	ClusterDomain string   `json:"clusterDomain,omitempty"`

	// DropIns are the user's KubeletConfiguration drop-ins, which render
	// writes into ConfigDir (kubelet's --config-dir; set only with
	// drop-ins) and kubelet merges over ConfigPath in File order.
	ConfigDir string          `json:"configDir,omitempty"`
	DropIns   []KubeletDropIn `json:"dropIns,omitempty"`
}

// KubeletDropIn is one drop-in file: KubeletConfiguration fields of the
// user's, kubelet's spelling, without apiVersion and kind (render adds
// them).
type KubeletDropIn struct {
	File     string         `json:"file"` // DropInFile or PartitionDropInFile
	Settings map[string]any `json:"settings"`
}

// The drop-in files, in the order kubelet merges them: a [[partition]]'s
// over [kubelet]'s.
const (
	DropInFile          = "50-kubelet.conf"
	PartitionDropInFile = "60-partition.conf"
)

// ConfigDirOf is the drop-in directory of a kubelet whose
// KubeletConfiguration is at configPath: beside it, so that it is the
// partition's own wherever config_path puts the file.
func ConfigDirOf(configPath string) string { return configPath + ".d" }

// TopologyPolicyOptions are the kubelet's Topology Manager options, typed,
// read with the rule the planner checked them by: what kubeletgen renders
// and the daemon decides with. The plan keeps kubelet's map form, the
// options as the config spelled them ("T", an explicit "false"), so
// plan.json and the rendered KubeletConfiguration say what they said.
func (k *Kubelet) TopologyPolicyOptions() (topologymanager.PolicyOptions, error) {
	return topologymanager.NewPolicyOptions(k.TopologyManagerOptions)
}

// RuntimeKind says whether a partition has its own containerd.
type RuntimeKind string

// Runtime kinds.
const (
	RuntimeContainerd RuntimeKind = "containerd" // one containerd per partition
	RuntimeShared     RuntimeKind = "shared"     // an explicit shared endpoint
)

// Runtime is the partition's container runtime.
type Runtime struct {
	Kind       RuntimeKind `json:"kind"`
	Endpoint   string      `json:"endpoint"` // unix:///run/containerd-node0/containerd.sock
	Binary     string      `json:"binary,omitempty"`
	ConfigPath string      `json:"configPath,omitempty"`
	RootDir    string      `json:"rootDir,omitempty"`
	StateDir   string      `json:"stateDir,omitempty"`
	// SandboxImage is empty for containerd's built-in default.
	SandboxImage string `json:"sandboxImage,omitempty"`
	CNIConfDir   string `json:"cniConfDir,omitempty"`
	CNIBinDir    string `json:"cniBinDir,omitempty"`
}

// Allocator is the partition's allocator daemon.
type Allocator struct {
	Socket      string `json:"socket"`   // /run/numa-partition/node0.sock
	StateDir    string `json:"stateDir"` // /var/lib/numa-partition/node0
	SocketGroup string `json:"socketGroup,omitempty"`
	// MetricsPort, when not 0, is the TCP port where the daemon also
	// serves /metrics, on the partition's address (Network.Address) in
	// its namespace, else on the host's addresses
	// (fromplan.MetricsAddr): allocator.metrics_port plus the
	// partition's index times the port stride, checked with the plan's
	// other ports.
	MetricsPort int `json:"metricsPort,omitempty"`
	// SyncBeforeAnswer: each decision is answered once its journal
	// record is on the disk, not once it is written (allocator.sync_before_answer).
	SyncBeforeAnswer bool `json:"syncBeforeAnswer,omitempty"`
	// Mode is config.AllocatorModeKubelet or config.AllocatorModeNRI; NRISocket is the
	// partition's containerd NRI socket the allocator plugs into, under
	// the plugin name NRIPlugin (which, in nri mode, the partition's
	// containerd requires before it creates a container).
	Mode      string `json:"mode,omitempty"`
	NRISocket string `json:"nriSocket,omitempty"`
	NRIPlugin string `json:"nriPlugin,omitempty"`
	// In nri mode the topology policy is the allocator's (the kubelet's
	// managers are rendered off): the configured policy, scope and options.
	TopologyPolicy  string            `json:"topologyPolicy,omitempty"`
	TopologyScope   string            `json:"topologyScope,omitempty"`
	TopologyOptions map[string]string `json:"topologyOptions,omitempty"`
}

// TopologyPolicyOptions are the allocator's Topology Manager options in
// nri mode, typed, as Kubelet.TopologyPolicyOptions.
func (a *Allocator) TopologyPolicyOptions() (topologymanager.PolicyOptions, error) {
	return topologymanager.NewPolicyOptions(a.TopologyOptions)
}
