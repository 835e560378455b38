package config

import "github.com/numa-partition/numa-partition/internal/hostpaths"

// Defaults. docs/config-reference.md is generated from them (make generate);
// the tables of docs/config.md repeat them and a test keeps both in step.
const (
	DefaultKubeletBinary       = "/usr/bin/kubelet"
	DefaultNodeName            = "{hostname}-{partition}"
	DefaultKubeletConfigPath   = "/etc/numa-partition/kubelet-{partition}.yaml"
	DefaultRootDir             = "/var/lib/kubelet-{partition}"
	DefaultCertDir             = "{root_dir}/pki"
	DefaultKubeconfig          = "/etc/kubernetes/kubelet-{partition}.conf"
	DefaultBootstrapKubeconfig = "/etc/kubernetes/bootstrap-kubelet-{partition}.conf"
	DefaultDevicePluginsDir    = "{root_dir}/device-plugins"
	DefaultPodLogsDir          = "/var/log/pods-{partition}"
	// DefaultClusterDomain is kubeadm's, given to kubelet when the config
	// names a cluster DNS but no domain.
	DefaultClusterDomain = "cluster.local"

	// Kubelet's own defaults for partition 0; the stride keeps port and
	// healthzPort of every partition off each other (they end in 0 and 8)
	// and off kube-proxy, the scheduler and the controller manager.
	DefaultPort         = 10250
	DefaultHealthzPort  = 10248
	DefaultReadOnlyPort = 0
	DefaultPortStride   = 10
	DefaultMaxPods      = 110

	// DefaultMetricsPort is the allocator daemon's /metrics port (the
	// one its docs always showed), below the kubelet and kube-proxy
	// ports: with the default stride partition i's in the host's
	// namespace ends in 4, as no kubelet port (0 and 8) and no
	// well-known host component's does.
	DefaultMetricsPort = 9464

	// OpenShift node tuning operator's defaults; their sum (1100Mi) is what
	// each partition's kubelet reserves with the Static memory manager.
	DefaultKubeReservedMemory   = "500Mi"
	DefaultSystemReservedMemory = "500Mi"
	DefaultEvictionHardMemory   = "100Mi"

	DefaultCPUManagerPolicy      = "static"
	DefaultMemoryManagerPolicy   = "Static"
	DefaultTopologyManagerPolicy = "best-effort"
	DefaultTopologyManagerScope  = "container"

	DefaultContainerdBinary     = "/usr/bin/containerd"
	DefaultContainerdEndpoint   = "unix:///run/containerd-{partition}/containerd.sock"
	DefaultContainerdConfigPath = "/etc/numa-partition/containerd-{partition}.toml"
	DefaultContainerdRootDir    = "/var/lib/containerd-{partition}"
	DefaultContainerdStateDir   = "/run/containerd-{partition}"
	DefaultCNIConfDir           = "/etc/cni/net.d"
	DefaultCNIBinDir            = "/opt/cni/bin"

	DefaultAllocatorSocket   = hostpaths.AllocatorSocketTemplate
	DefaultAllocatorStateDir = hostpaths.AllocatorStateDirTemplate

	// Allocator modes (allocator.mode).
	AllocatorModeAuto    = "auto"
	AllocatorModeKubelet = "kubelet"
	AllocatorModeNRI     = "nri"

	// ShareAuto splits ephemeral-storage and pids by CPUs (shares.go).
	ShareAuto = "auto"

	// ReservedCPUsAuto reserves the first core of each socket.
	ReservedCPUsAuto = "auto"
)

// Network defaults.
const (
	DefaultBridge       = "npbr0"
	DefaultBridgeSubnet = "10.212.0.0/24"
	DefaultResolvConf   = "/etc/resolv.conf"
)

// DefaultNodeDirs are the node dirs of a partition in its own network
// namespace unless network.node_dirs says otherwise: where a kubeadm
// cluster's CNI add-on writes its config and IPAM state (flannel's
// subnet lease included), and where kubelet writes the pod logs and
// log collectors read them.
var DefaultNodeDirs = []string{"/etc/cni/net.d", "/var/lib/cni", "/run/flannel", "/var/log/pods", "/var/log/containers"}

// Colors name partitions in the default numa-type label, in index order.
// Partitions beyond the list are "color<index>".
var Colors = []string{"red", "blue", "green", "yellow", "orange", "purple", "cyan", "magenta",
	"brown", "pink", "olive", "teal", "navy", "maroon", "lime", "gray"}
