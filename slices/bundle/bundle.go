// Package bundle is the contract between render and apply: the files and
// units render makes of a plan, with the typed facts apply acts on (each
// slice's cpuset, the hugepage pools, the ports, each kubelet's manager
// state, the network objects) and the partitions as the record keeps
// them. Render produces a Bundle; apply, status and remove consume it and
// the record made of it. It imports no planning type: the record on disk
// is this package's JSON, whatever the planner becomes.
package bundle

import (
	"io/fs"
	"net/netip"

	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

// PlanPath keeps the plan the bundle was rendered from
// (hostpaths.PlanRel).
const PlanPath = hostpaths.PlanRel

// NetnsDir is where the partitions' named network namespaces are mounted
// (iproute2's directory: `ip netns exec np-node0 ...` works on them).
const NetnsDir = "/run/netns"

// MountnsUnit is the unit holding partition name's mount namespace.
func MountnsUnit(name string) string { return "mountns-" + name + ".service" }

// File is one rendered file. Path is relative to the target root
// ("etc/systemd/system/node0.slice"), so the same bundle can be written to
// "/" by apply or to a scratch directory by `render --out`.
type File struct {
	Path    string      `json:"path"`
	Mode    fs.FileMode `json:"mode"`
	Content []byte      `json:"-"`
}

// Phase orders unit actions in apply: lower phases start first.
type Phase int

// Phases, in start order.
const (
	PhaseSlice     Phase = iota // nodeX.slice, system.slice locks
	PhaseHugepages              // the hugepages oneshot
	PhaseNetwork                // the uplink and each partition's netns-nodeX.service
	PhaseRuntime                // containerd-nodeX.service
	PhaseAllocator              // numa-allocator@nodeX.service
	PhaseKubelet                // kubelet-nodeX.service
)

// Unit is a systemd unit the bundle defines and what apply does with it.
type Unit struct {
	Name      string `json:"name"` // "kubelet-node0.service"
	Phase     Phase  `json:"phase"`
	Partition string `json:"partition,omitempty"` // "" for host-wide units
	Enable    bool   `json:"enable"`
	Start     bool   `json:"start"`
	// Files are the bundle paths whose change requires a restart of this unit.
	Files []string `json:"files"`
	// Cpuset is what a slice or scope's files set as AllowedCPUs= and
	// AllowedMemoryNodes=: apply sets them live too and, on cgroup v1,
	// writes them into the cpuset hierarchy. nil for other units.
	Cpuset *Cpuset `json:"cpuset,omitempty"`
	// KubeletState is, for a kubelet, where its CPU and Memory Managers
	// keep their state and the settings that state is checked against.
	KubeletState *KubeletState `json:"kubeletState,omitempty"`
	// RecreatesPods is true for a unit whose restart re-creates every pod
	// of its partition (of every partition, for a host-wide unit): the
	// mount namespace holder, and the network units it is part of
	// (PartOf=). containerd and kubelet restart into a new namespace
	// without their pods' mounts, and kubelet re-creates each sandbox, so
	// apply --drain drains the Node before such a restart.
	RecreatesPods bool `json:"recreatesPods,omitempty"`
	// KeepOnChange is true for a unit that apply does not restart when
	// its files change, because apply does its work itself: the
	// hugepages oneshot, whose pools apply sizes (step hugepages) and
	// which every kubelet Requires=, so that its restart would restart
	// every partition's kubelet for one partition's pool. The new files
	// are what it runs at the next boot.
	KeepOnChange bool `json:"keepOnChange,omitempty"`
}

// KubeletState is a kubelet's resource-manager state: kubelet refuses to
// start on a cpu_manager_state or memory_manager_state written under
// other settings (another policy, reserved CPUs or memory, hugepage
// pools), so apply moves the files aside when Settings change.
type KubeletState struct {
	Dir string `json:"dir"` // the kubelet's --root-dir, relative to the root
	// Settings are, in one line, everything the managers check their
	// state against (kubelet's validateState).
	Settings string `json:"settings"`
}

// Cpuset is a slice's or scope's CPUs and memory nodes.
type Cpuset struct {
	CPUs bitmask.CPUSet  `json:"cpus"`
	Mems bitmask.NodeSet `json:"mems"`
}

// Port is a TCP port a rendered daemon will listen on, and its unit.
type Port struct {
	Port  int    `json:"port"`
	Owner string `json:"owner"` // "node0 kubelet healthzPort"
	Unit  string `json:"unit"`
}

// Bundle is the whole rendered result.
type Bundle struct {
	Files []File `json:"files"` // sorted by Path
	Units []Unit `json:"units"` // sorted by Phase, then Name
	// KernelCmdline reserves each node's hugepages at boot without
	// fragmentation (Linux >= 5.16), for the user's boot loader.
	KernelCmdline string `json:"kernelCmdline"`
	// Warnings say where the bundle had to compromise (a partition without
	// host-reserved CPUs, a shared runtime). Never silent.
	Warnings []string `json:"warnings"`
	// Hugepages are every planned pool (the hugepages oneshot's).
	Hugepages []hugepool.Pool `json:"hugepages"`
	// Ports are the TCP ports the bundle's daemons will listen on.
	Ports []Port `json:"ports"`
	// CgroupV2Only are the partitions that need cgroup v2: their allocator
	// places containers (nri mode), with kubelet's CPU Manager off.
	CgroupV2Only []string `json:"cgroupV2Only,omitempty"`
	// CgroupV1Only are the partitions whose kubelet is shown its
	// partition as the machine, which needs cgroup v1 (kubeletgen's
	// machine.go): apply refuses them on a cgroup v2 host.
	CgroupV1Only []string `json:"cgroupV1Only,omitempty"`
	// UnifiedViews are the partitions whose kubelet reads its slice's
	// cgroup v2 usage files with openat2 hidden (kubeletgen's machine.go,
	// slices/nodeview/usage.go): rendered for a v2 host, apply refuses
	// them on v1, where that kubelet would refuse the holder's served
	// memory files.
	UnifiedViews []string `json:"unifiedViews,omitempty"`
	// Network are the network objects the bundle's oneshots make on the
	// host (namespace mode; nil in host mode): apply records them, so
	// that a later apply or remove takes away those a plan no longer has.
	Network *Network `json:"network,omitempty"`
	// Hostname and ReservedCPUs are the plan's host, Partitions its
	// partitions (PartitionsOf), as apply records them: the bundle is
	// apply's only input, it never reads the plan.
	Hostname     string         `json:"hostname,omitempty"`
	ReservedCPUs bitmask.CPUSet `json:"reservedCPUs"`
	Partitions   []Partition    `json:"partitions"`
}

// Partition is what apply records of a partition, and status, remove and
// the drains read back: the record keeps it as it is (its JSON is the
// record's).
type Partition struct {
	Name            string          `json:"name"`
	Slice           string          `json:"slice"`
	Nodes           bitmask.NodeSet `json:"nodes"`
	CPUs            bitmask.CPUSet  `json:"cpus"`
	KubeletHealthz  int             `json:"kubeletHealthzPort,omitempty"`
	AllocatorSocket string          `json:"allocatorSocket,omitempty"`
	// NodeName is the partition's Kubernetes Node and Kubeconfig its
	// kubelet's kubeconfig (a path on the host): status reads that Node
	// with those credentials, which the Node authorizer lets a kubelet do
	// for its own Node. Records written before these fields existed lack
	// them; status then does not check the Node.
	NodeName   string `json:"nodeName,omitempty"`
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// Network is the partition's namespace and address (namespace mode):
	// status probes its kubelet there and checks the namespace.
	Network *PartitionNetwork `json:"network,omitempty"`
	// HostMemoryReserved is, when its kubelet cannot see the host's
	// memory on its nodes (kubeletgen.Machine.HostMemoryUnseen: cgroup
	// v2), the host's reservation there, which its eviction threshold
	// counts on: status warns when the host holds more there. nil when
	// the kubelet sees the host's memory.
	HostMemoryReserved *uint64 `json:"hostMemoryReservedBytes,omitempty"`
	// KubeReservedMemory is the memory its kubelet reserves for the
	// partition's own daemons (kubeReserved, the plan's
	// kube_reserved_memory): status compares what its kubelet,
	// containerd, allocator and holder use with it. nil in records
	// written before it existed.
	KubeReservedMemory *uint64 `json:"kubeReservedMemoryBytes,omitempty"`
	// KubeletBinary and ContainerdBinary are the executables its kubelet
	// and its containerd run (ContainerdBinary is "" with a shared
	// runtime). apply --drain drains the Node of a partition whose
	// either one changes before it restarts them, as kubeadm's upgrade
	// drains a Node before its kubelet moves. Records written before
	// they existed lack them: apply then drains no Node for that.
	KubeletBinary    string `json:"kubeletBinary,omitempty"`
	ContainerdBinary string `json:"containerdBinary,omitempty"`
}

// Network is what the uplink's and the namespaces' oneshots make.
type Network struct {
	// Bridge is the bridge uplink's host bridge, "" for macvlan.
	Bridge string `json:"bridge,omitempty"`
	// NAT: the uplink's nftables table (netns.NATTable).
	NAT        bool        `json:"nat,omitempty"`
	Namespaces []Namespace `json:"namespaces"`
}

// Namespace is one partition's named namespace, the host end of its link
// and the host's devices it holds.
type Namespace struct {
	Partition string   `json:"partition"`
	Name      string   `json:"name"`
	HostLink  string   `json:"hostLink"`
	Interface string   `json:"interface"`
	Devices   []string `json:"devices,omitempty"`
}

// PartitionNetwork is a partition's network namespace, link and address
// (namespace mode), as the planner decided them.
type PartitionNetwork struct {
	Namespace string       `json:"namespace"` // under /run/netns
	HostLink  string       `json:"hostLink"`  // the host end of its veth (or the macvlan before it moves)
	Interface string       `json:"interface"` // inside the namespace
	Address   netip.Prefix `json:"address"`   // the Node's InternalIP, with the subnet's length
	Gateway   netip.Addr   `json:"gateway,omitzero"`
	// Devices are the host's network interfaces that move into the
	// namespace while it exists.
	Devices []NetDevice `json:"devices,omitempty"`
}

// NetDevice is a host network interface a partition's namespace holds.
type NetDevice struct {
	Name string `json:"name"`
	PCI  string `json:"pci"`
	// PhysFn is the physical function of an SR-IOV virtual function.
	PhysFn string `json:"physfn,omitempty"`
	// Node is the function's NUMA node, -1 when the firmware does not say.
	Node int `json:"node"`
}
