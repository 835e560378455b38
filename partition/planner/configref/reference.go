package configref

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// KeyDoc documents one key of the config file. The reference below is the
// one place key documentation lives: `numa-partition config reference`
// renders it as markdown (docs/config-reference.md) and the commented
// configs (`config init`, the packaged /etc/numa-partition/config.toml)
// take each key's description and default from it. A test walks Config's toml
// tags and fails when a key has no entry or an entry names no key.
type KeyDoc struct {
	// Key is the TOML path: "kubelet.port". "[]" marks an array of tables:
	// "partition[]" is the table itself, "partition[].labels" its key.
	Key string
	// Type is what the value is written as: "string", "template",
	// "size", "integer", "node list", "table of strings", ... or "table" /
	// "array of tables" for a section.
	Type string
	// Default is the value the planner uses when the key is absent, in
	// TOML form (string, int, []int, map[string]string), taken from the
	// defaults code. nil when the default is not a fixed value: then
	// DefaultText says what happens.
	Default     any
	DefaultText string
	// Allowed lists the values when the key takes one of a few.
	Allowed []string
	// Example is a TOML value shown, commented out, for keys without a
	// fixed default.
	Example string
	// Doc describes the key: one paragraph, in the reference and above
	// the key in the commented configs.
	Doc string
}

// IsSection reports whether the entry documents a table rather than a key.
func (d KeyDoc) IsSection() bool { return d.Type == typeTable || d.Type == typeTables }

// DefaultTOML is the default as a TOML value ("" when it is not fixed).
func (d KeyDoc) DefaultTOML() string {
	if d.Default == nil {
		return ""
	}
	return tomlValue(d.Default)
}

// Value types of the reference. A test checks each against the Go type
// of its field, so a string key cannot be documented as an integer.
const (
	typeTable      = "table"
	typeTables     = "array of tables"
	typeString     = "string"
	typeTemplate   = "template"
	typePath       = "path"
	typeSize       = "size"
	typeCPUList    = "CPU list or \"auto\""
	typeInt        = "integer"
	typeBool       = "boolean"
	typeNodeList   = "node list"
	typeNodeLists  = "array of node lists"
	typeStrings    = "array of strings"
	typeStringMap  = "table of strings"
	typeSizeMap    = "table of sizes"
	typeOptionsMap = "table of options"
	typeDropIn     = "table of KubeletConfiguration fields"
)

// templateDoc ends the doc of every template key.
const templateDoc = " Template: `{partition}`, `{index}`, `{hostname}` and (except in `root_dir`) `{root_dir}` are replaced per partition."

// Reference is every key of the config file, in the order the reference
// and the commented configs present them.
func Reference() []KeyDoc {
	refs := []KeyDoc{
		{Key: "partitioning", Type: typeTable,
			Doc: "How the machine's NUMA nodes are grouped into partitions, one Kubernetes node each. " +
				"CPU-less nodes (memory-only, GPU memory, CXL) that are not excluded join the partition nearest by NUMA distance; " +
				"ties, including all-10 matrices and unknown distances, go to the lowest partition index with a warning. " +
				"Sockets sharing a node form one partition; nodes that list the same CPUs (a firmware error) form one partition, with a warning."},
		{Key: "partitioning.mode", Type: typeString, Default: config.ModeSocket,
			Allowed: []string{config.ModeSocket, config.ModeNode, config.ModeCustom},
			Doc: "How NUMA nodes are grouped into partitions. " +
				"`socket`: one partition per physical package, with all its NUMA nodes. " +
				"`node`: one partition per NUMA node with CPUs. " +
				"`custom`: the node lists of `partitioning.groups`, or the `nodes` of the `[[partition]]` entries when `groups` is absent."},
		{Key: "partitioning.groups", Type: typeNodeLists, DefaultText: "none", Example: `[[0, 1], [2, 3]]`,
			Doc: "The partitions' node lists in `custom` mode, one node list per partition. " +
				"They are kept in the given order (the position is the partition index), must not overlap, must name existing nodes " +
				"and together cover every node with CPUs that is not excluded. Read only in `custom` mode."},
		{Key: "partitioning.exclude_nodes", Type: typeNodeList, Default: []int{},
			Doc: "Nodes kept out of every partition. " +
				"Their CPUs stay with the host and their memory with nobody (every kubelet reserves it fully). " +
				"Use it for GPU and CXL memory nodes that no pod should allocate from."},

		{Key: "host", Type: typeTable,
			Doc: "What the host keeps for itself, and the hugepages apply allocates."},
		{Key: "host.reserved_cpus", Type: typeCPUList, Default: config.ReservedCPUsAuto,
			Doc: "CPUs that stay with the host and run no pod. " +
				"`auto` reserves the first physical core of each socket (the core holding its lowest online CPU) with all its online SMT siblings, at most one core per partition " +
				"(a partition of several sockets, or of lscpu's logical sockets on POWER and s390 LPARs where each core is one, keeps only its lowest socket's). " +
				"A core whose reservation would leave a partition with no CPU is skipped, with a warning. " +
				"A CPU list (`\"0,4\"`, `\"0-1,32-33\"`) names them exactly; CPUs the machine does not have are an error, offline ones a warning."},
		{Key: "host.memory_nodes", Type: typeNodeList, DefaultText: "the nodes of the reserved CPUs", Example: `[0]`,
			Doc: "Nodes the host's own processes allocate memory from. They must exist and hold memory. " +
				"They are documented in the host drop-ins but not locked by cgroup (no AllowedMemoryNodes= on system.slice): " +
				"the kernel fills a node's hugepage pool only for a writer allowed on that node, so a lock would stop apply " +
				"and the hugepages oneshot from allocating the partitions' pages; processes on the reserved CPUs allocate locally first anyway."},
		{Key: "host.reserved_memory", Type: typeSizeMap, DefaultText: "each partition's whole reservation on its first node with CPUs and memory", Example: `{ 0 = "1100Mi" }`,
			Doc: "Where each partition's kubelet memory reservation lies: NUMA node id to size. " +
				"For a partition with any of its nodes named here, the sizes on its nodes must add up to " +
				"`kube_reserved_memory + system_reserved_memory + eviction_hard_memory` (kubelet's Memory Manager rule); " +
				"its other nodes get nothing. Named nodes must be in a partition."},
		{Key: "host.reserved_ephemeral_storage", Type: typeString, Default: config.ShareAuto,
			Doc: "What the host keeps of the filesystem of `/` when partitions' kubelet root dirs are on it (its logs, images and packages live there). " +
				"`auto` gives it the share of its reserved CPUs, like a partition; `\"N%\"` is that part of the filesystem's capacity; a size (`\"50Gi\"`) is exact. " +
				"Of a filesystem only kubelets use, the host keeps nothing."},
		{Key: "host.reserved_pids", Type: typeString, Default: config.ShareAuto,
			Doc: "What the host keeps of the pid space (`min(kernel.pid_max, kernel.threads-max)`, kubelet's pid capacity). " +
				"`auto` gives it the share of its reserved CPUs; `\"N%\"` or a number of pids (`\"65536\"`) names it."},
		{Key: "host.unlisted_hugepages", Type: typeString, Default: config.UnlistedFree,
			Allowed: []string{config.UnlistedFree, config.UnlistedAdopt},
			Doc: "What becomes of hugepages a partition's node already holds in a pool `host.hugepages` does not list (pages the kernel command line or another tool reserved): kubelet's Memory Manager counts every page it finds, so they cannot stay unplanned. " +
				"`free`: the plan sets the pool to 0, and apply and the boot oneshot free it; pages in use are not freed, and apply and the oneshot fail naming the node, size and pages left. " +
				"`adopt`: the plan keeps the pool at the count it holds, as if listed, and its partition's kubelet offers the pages to pods. " +
				"`plan` and `config check` warn about each such pool and what will happen; `apply --dry-run` shows the pool's change. " +
				"Pages that appear after the plan was made are freed by the boot oneshot when nobody uses them, whatever this says: the reviewed plan never had them (docs/config.md, \"Hugepages already there\")."},
		{Key: "host.hugepages[]", Type: typeTables, DefaultText: "none",
			Doc: "Hugepages apply allocates on partition nodes, one entry per page size and set of nodes. " +
				"A node may appear in one entry per page size. Hugepages plus the node's share of the kubelet reservation must fit its memory."},
		{Key: "host.hugepages[].size", Type: typeSize, DefaultText: "none (required)", Example: `"2Mi"`,
			Doc: "Page size of the entry. It must be a size the node supports (`2Mi` and `1Gi` on x86-64)."},
		{Key: "host.hugepages[].count", Type: typeInt, Default: 0,
			Doc: "Pages of `size` to allocate on each of `nodes`."},
		{Key: "host.hugepages[].nodes", Type: typeNodeList, DefaultText: "every partition node with CPUs", Example: `[0, 1]`,
			Doc: "Nodes that get `count` pages each. They must be partition nodes."},

		{Key: "kubelet", Type: typeTable,
			Doc: "Settings shared by every partition's kubelet. " +
				"A `[[partition]]` entry overrides some of them for its partition."},
		{Key: "kubelet.hostname", Type: typeString, DefaultText: "the host's name", Example: `"worker1"`,
			Doc: "Host name the partitions' node names derive from. It is lowercased; set it to plan for another machine."},
		{Key: "kubelet.binary", Type: typePath, Default: config.DefaultKubeletBinary,
			Doc: "The kubelet executable, an absolute path."},
		{Key: "kubelet.node_name", Type: typeTemplate, Default: config.DefaultNodeName,
			Doc: "Name of each partition's Node object. It must be a DNS subdomain and unique." + templateDoc},
		{Key: "kubelet.config_path", Type: typeTemplate, Default: config.DefaultKubeletConfigPath,
			Doc: "Where each partition's KubeletConfiguration is written, an absolute path." + templateDoc},
		{Key: "kubelet.root_dir", Type: typeTemplate, Default: config.DefaultRootDir,
			Doc: "Each kubelet's `--root-dir`, an absolute path. Two kubelets in one root dir corrupt each other, so it must differ per partition." + templateDoc},
		{Key: "kubelet.cert_dir", Type: typeTemplate, Default: config.DefaultCertDir,
			Doc: "Each kubelet's `--cert-dir`, an absolute path." + templateDoc},
		{Key: "kubelet.kubeconfig", Type: typeTemplate, Default: config.DefaultKubeconfig,
			Doc: "Each kubelet's `--kubeconfig`, an absolute path." + templateDoc},
		{Key: "kubelet.bootstrap_kubeconfig", Type: typeTemplate, Default: config.DefaultBootstrapKubeconfig,
			Doc: "Each kubelet's `--bootstrap-kubeconfig`, an absolute path. Unlike the other paths it may be shared by every partition: kubelet only reads it." + templateDoc},
		{Key: "kubelet.device_plugins_dir", Type: typeTemplate, Default: config.DefaultDevicePluginsDir,
			Doc: "Each kubelet's device plugin directory. " +
				"It is bind-mounted at `/var/lib/kubelet/device-plugins` in that kubelet's mount namespace, because kubelet hard-codes that path." + templateDoc},
		{Key: "kubelet.pod_logs_dir", Type: typeTemplate, Default: config.DefaultPodLogsDir,
			Doc: "Each kubelet's pod log directory, an absolute path." + templateDoc},
		{Key: "kubelet.static_pod_path", Type: typeTemplate, DefaultText: "none (no static pods)", Example: `"/etc/kubernetes/manifests-{partition}"`,
			Doc: "Each kubelet's static pod manifest directory, an absolute path." + templateDoc},
		{Key: "kubelet.port", Type: typeInt, Default: config.DefaultPort,
			Doc: "Kubelet API port of partition 0. Partition i listens on `port + i × port_stride`."},
		{Key: "kubelet.healthz_port", Type: typeInt, Default: config.DefaultHealthzPort,
			Doc: "Healthz port of partition 0. Partition i listens on `healthz_port + i × port_stride`."},
		{Key: "kubelet.read_only_port", Type: typeInt, Default: config.DefaultReadOnlyPort,
			Doc: "Read-only port of partition 0; 0 turns it off. `10255` turns it on, partition i listening on `read_only_port + i × port_stride`."},
		{Key: "kubelet.port_stride", Type: typeInt, DefaultText: "`0` in `network.mode = \"namespace\"` (every kubelet on the standard ports, each in its own namespace); `10` in `host` mode", Example: "10",
			Doc: "Distance between the ports of consecutive partitions; at least 1 in `host` mode, where they share one namespace. " +
				"With 10 the ports end in 0, 8 and 5 and never meet each other nor kube-proxy (10249, 10256), " +
				"the controller manager (10257), the scheduler (10259), etcd (2379, 2380) or the API server (6443). " +
				"Those ports, collisions inside the plan and ports outside 1-65535 are errors."},
		{Key: "kubelet.max_pods", Type: typeInt, Default: config.DefaultMaxPods,
			Doc: "Most pods each kubelet runs, 1-2147483647 (kubelet's `maxPods` is a 32-bit integer)."},
		{Key: "kubelet.kube_reserved_memory", Type: typeSize, Default: config.DefaultKubeReservedMemory,
			Doc: "Memory each kubelet reserves for Kubernetes daemons (`kubeReserved`). " +
				"With the defaults (those of OpenShift's node tuning operator) kube + system + eviction is 1100Mi per partition, " +
				"placed on the partition's nodes as `host.reserved_memory` says."},
		{Key: "kubelet.system_reserved_memory", Type: typeSize, Default: config.DefaultSystemReservedMemory,
			Doc: "Memory each kubelet reserves for the operating system (`systemReserved`)."},
		{Key: "kubelet.eviction_hard_memory", Type: typeSize, Default: config.DefaultEvictionHardMemory,
			Doc: "Each kubelet's `memory.available` hard eviction threshold. " +
				"With the `Static` memory manager, kube + system + eviction must not all be 0."},
		{Key: "kubelet.ephemeral_storage", Type: typeString, Default: config.ShareAuto,
			Doc: "Each partition's share of the filesystem under its kubelet root dir: its Node's `ephemeral-storage` allocatable, the rest rendered as `systemReserved`. " +
				"On a filesystem shared with other partitions (or the host's `/`), `auto` splits capacity minus kubelet's 10% `nodefs.available` eviction threshold in proportion to CPUs, " +
				"after the shares named as `\"N%\"` of the capacity or as sizes (`\"100Gi\"`); named shares that do not fit are an error. " +
				"A partition alone on its filesystem (its root dir a mount of its own) gets all of it with `auto`."},
		{Key: "kubelet.pids", Type: typeString, Default: config.ShareAuto,
			Doc: "Each partition's share of the host's pid space: its pods' `pids.max` (kubelet's node allocatable `pid`), the rest rendered as `systemReserved`. " +
				"`auto` splits `min(kernel.pid_max, kernel.threads-max)` in proportion to CPUs among the partitions and the host, " +
				"after the shares named as `\"N%\"` or as numbers (`\"32768\"`)."},
		{Key: "kubelet.cpu_manager_policy", Type: typeString, Default: config.DefaultCPUManagerPolicy,
			Allowed: planner.AllowedCPUManagerPolicies(),
			Doc:     "Kubelet's CPU Manager policy."},
		{Key: "kubelet.cpu_manager_policy_options", Type: typeOptionsMap, Default: planner.DefaultCPUManagerPolicyOptions(),
			DefaultText: "with the `static` policy; none otherwise",
			Doc: "CPU Manager policy options, option name to `\"true\"` or `\"false\"`; they need the `static` policy. " +
				"Kubelet's CPU Manager allocates from every CPU it is shown, so render reserves all but the partition's; " +
				"`strict-cpu-reservation` keeps best-effort and burstable pods off it too: under the `static` policy it is always set, " +
				"beside the options given here, and may not be `\"false\"`. " +
				"Options: " + strings.Join(planner.AllowedCPUManagerOptions(), ", ") + "."},
		{Key: "kubelet.memory_manager_policy", Type: typeString, Default: config.DefaultMemoryManagerPolicy,
			Allowed: planner.AllowedMemoryManagerPolicies(),
			Doc:     "Kubelet's Memory Manager policy."},
		{Key: "kubelet.topology_manager_policy", Type: typeString, Default: config.DefaultTopologyManagerPolicy,
			Allowed: planner.AllowedTopologyManagerPolicies(),
			Doc:     "Kubelet's Topology Manager policy, which the partition's allocator daemon follows too."},
		{Key: "kubelet.topology_manager_scope", Type: typeString, Default: config.DefaultTopologyManagerScope,
			Allowed: planner.AllowedTopologyManagerScopes(),
			Doc:     "Kubelet's Topology Manager scope: align each container, or the whole pod."},
		{Key: "kubelet.topology_manager_options", Type: typeOptionsMap, DefaultText: "none", Example: `{ "prefer-closest-numa-nodes" = "true" }`,
			Doc: "Topology Manager policy options, option name to value. " +
				"`prefer-closest-numa-nodes` takes `\"true\"` or `\"false\"`; " +
				fmt.Sprintf("`max-allowable-numa-nodes` a whole number of at least %d and at least the machine's node count. ", topologymanager.DefaultMaxAllowableNUMANodes) +
				fmt.Sprintf("On machines with more than %d NUMA nodes the plan sets `max-allowable-numa-nodes` to the node count "+
					"(kubelet counts the whole machine, not the partition), with a warning.", topologymanager.DefaultMaxAllowableNUMANodes)},
		{Key: "kubelet.labels", Type: typeStringMap, DefaultText: "none", Example: `{ "example.com/pool" = "hpc" }`,
			Doc: fmt.Sprintf("Node labels of every partition, added to `%s=<colour>`, `%s=<name>` and `%s=<kubelet.hostname>`. ", planner.LabelNUMAType, planner.LabelPartition, planner.LabelHost) +
				"Values are templates. Keys and values follow Kubernetes label syntax; keys in the `kubernetes.io` and `k8s.io` namespaces " +
				"are refused unless kubelet may set them (`node.kubernetes.io/…`, `kubelet.kubernetes.io/…`, the topology labels), " +
				fmt.Sprintf("and so are numa-partition's own keys (`%s` and the `%s…` namespace). ", planner.LabelNUMAType, planner.OwnLabelPrefix) +
				"The colours are, by partition index: " + strings.Join(config.Colors, ", ") + ", then `color<index>`."},
		{Key: "kubelet.taints", Type: typeStrings, DefaultText: "none", Example: `["dedicated=hpc:NoSchedule"]`,
			Doc: "Taints every partition's node registers with, each `key[=value]:Effect`. " +
				"Effect is one of `NoSchedule`, `PreferNoSchedule`, `NoExecute`. " +
				fmt.Sprintf("Keys in numa-partition's own `%s…` namespace are refused.", planner.OwnLabelPrefix)},
		{Key: "kubelet.cluster_dns", Type: typeStrings, DefaultText: "none (pods get the host's resolv.conf)", Example: `["10.96.0.10"]`,
			Doc: "IP addresses of the cluster DNS service, written into every pod's resolv.conf (kubelet's `clusterDNS`). The same for every partition."},
		{Key: "kubelet.cluster_domain", Type: typeString, DefaultText: "`\"" + config.DefaultClusterDomain + "\"` (kubeadm's) when `cluster_dns` is set, else none", Example: `"cluster.local"`,
			Doc: "The cluster's DNS domain (kubelet's `clusterDomain`), searched by pods in addition to the host's domains. The same for every partition. " +
				"Without it pods search no cluster domain, so a Service's short name and `kubernetes.default` go to the upstream resolver and fail."},
		{Key: "kubelet.extra_args", Type: typeStrings, DefaultText: "none", Example: `["--v=2"]`,
			Doc: "Extra kubelet command-line flags, each `--flag=value` (kubelet would read a separate value argument as belonging to the flag before it). " +
				"Flags numa-partition sets per partition are refused, also written with `_` for `-` as kubelet reads them: " + strings.Join(validation.ManagedFlags(), ", ") + ". " +
				"So are flags that stop a kubelet, keep its Node out of the cluster or make it act as something else: " + strings.Join(validation.DeniedFlags(), ", ") + ". " +
				"At most 256 arguments of at most 4096 bytes each, 64 KiB in all (docs/config.md, Paths and arguments)."},
		{Key: "kubelet.drop_in", Type: typeDropIn, DefaultText: "none", Example: `{ serializeImagePulls = false, containerLogMaxSize = "50Mi" }`,
			Doc: "KubeletConfiguration fields for every partition's kubelet, spelt as kubelet spells them (`featureGates = { SomeGate = true }`): the way to any kubelet setting the config has no key for. " +
				"Render writes them to `<config_path>.d/" + planner.DropInFile + "` and gives kubelet `--config-dir`, and kubelet merges them over the rendered file (tables merge, values and lists replace). " +
				"Fields numa-partition sets per partition are refused, in any case: " + strings.Join(validation.ManagedFields(), ", ") + ". " +
				"So are fields that keep a Node out of the cluster or make it act as something else: " + strings.Join(validation.DeniedFields(), ", ") + ". " +
				"A value kubelet 1.37 could not read is an error; a field it does not know, a warning (a newer kubelet may know it). docs/config.md, \"KubeletConfiguration drop-ins\"."},

		{Key: "runtime", Type: typeTable,
			Doc: "The container runtime of the partitions."},
		{Key: "runtime.mode", Type: typeString, Default: config.RuntimeModeContainerd,
			Allowed: []string{config.RuntimeModeContainerd, config.RuntimeModeShared},
			Doc: "Whether each partition gets its own containerd. " +
				"`containerd`: one containerd per partition. `shared`: every kubelet uses `endpoint`; " +
				"kubelets sharing a runtime treat each other's pods as orphans and kill them, so the plan warns."},
		{Key: "runtime.endpoint", Type: typeTemplate, Default: config.DefaultContainerdEndpoint,
			Doc: "CRI endpoint of each kubelet, `unix:///…`. Required in `shared` mode." + templateDoc},
		{Key: "runtime.binary", Type: typePath, Default: config.DefaultContainerdBinary,
			Doc: "The containerd executable, an absolute path."},
		{Key: "runtime.config_path", Type: typeTemplate, Default: config.DefaultContainerdConfigPath,
			Doc: "Where each partition's containerd config is written." + templateDoc},
		{Key: "runtime.root_dir", Type: typeTemplate, Default: config.DefaultContainerdRootDir,
			Doc: "Each containerd's root (persistent) directory." + templateDoc},
		{Key: "runtime.state_dir", Type: typeTemplate, Default: config.DefaultContainerdStateDir,
			Doc: "Each containerd's state (runtime) directory. It also holds the partition's NRI socket (`nri.sock`) and runc's state (`runc/`)." + templateDoc},
		{Key: "runtime.sandbox_image", Type: typeString, DefaultText: "containerd's built-in (`registry.k8s.io/pause` of its release)", Example: `"registry.example.internal/pause:3.10"`,
			Doc: "The pod sandbox (pause) image every partition's containerd pins, an image reference. " +
				"Set it on air-gapped hosts and import the image into each containerd's `k8s.io` namespace (`ctr -n k8s.io images import`) before apply."},
		{Key: "runtime.cni_conf_dir", Type: typeTemplate, Default: config.DefaultCNIConfDir,
			Doc: "Where each containerd reads its CNI network configuration, an absolute path. " +
				"Partitions may share it; give each its own (`/etc/cni/net.d-{partition}`) when their pod networks differ." + templateDoc},
		{Key: "runtime.cni_bin_dir", Type: typePath, Default: config.DefaultCNIBinDir,
			Doc: "Where the CNI plugin executables are, an absolute path (Debian's containernetworking-plugins: `/usr/lib/cni`)."},

		{Key: "allocator", Type: typeTable,
			Doc: "The allocator daemon that runs inside each partition's slice."},
		{Key: "allocator.mode", Type: typeString, Default: config.AllocatorModeAuto,
			Allowed: []string{config.AllocatorModeAuto, config.AllocatorModeKubelet, config.AllocatorModeNRI},
			Doc: "Who places each partition's containers on its NUMA nodes. " +
				"`kubelet`: kubelet's CPU, Memory and Topology Managers, as configured under `[kubelet]`; the allocator plugs into the partition's containerd through NRI and mirrors what they decided. " +
				"`nri`: the allocator decides and enforces through NRI (cpuset.mems for memory and hugepages, exclusive whole cores for Guaranteed containers with integer CPUs, the shared pool for the rest) with the `[kubelet]` topology policy, scope and options; kubelet's managers are rendered off (`none`/`None`). " +
				"Needs the partition's own containerd. `auto`: `kubelet` up to 8 NUMA nodes per partition (kubelet's own limit), `nri` beyond. See docs/allocator.md."},
		{Key: "allocator.socket", Type: typeTemplate, Default: config.DefaultAllocatorSocket,
			Doc: "Unix socket the partition's allocator daemon listens on." + templateDoc},
		{Key: "allocator.state_dir", Type: typeTemplate, Default: config.DefaultAllocatorStateDir,
			Doc: "Where the allocator daemon keeps its checkpoint." + templateDoc},
		{Key: "allocator.socket_group", Type: typeString, DefaultText: "none (root only)", Example: `"kube"`,
			Doc: "Group that owns the allocator socket, so its members can use it."},
		{Key: "allocator.sync_before_answer", Type: typeBool, Default: false,
			Doc: "Answer each decision only once its journal record is on the disk (`fdatasync`), not once it is written. " +
				"By default a decision is answered once written, which a crash of the daemon cannot take back, and synced right after, before the next one: " +
				"only a crash of the OS (which ends the containers the decision placed too) can take the last record, and the journal on the disk stays readable. " +
				"Set it when clients of the allocator's API must find every answered decision after a power loss; it adds the disk's fdatasync (0.2–1.5 ms on a virtual disk) to every container's creation. See docs/allocator-daemon.md."},
		{Key: "allocator.metrics_port", Type: typeInt, Default: config.DefaultMetricsPort,
			Doc: "Base of the allocator daemons' Prometheus `/metrics` ports; 0 turns metrics off. " +
				"Partition i listens on `metrics_port + i × kubelet.port_stride` (the stride is 0 in `namespace` mode), checked against the kubelet ports: " +
				"in `namespace` mode on the partition's own address (its Node's InternalIP), so that the cluster's Prometheus scrapes every partition, " +
				"in `host` mode on every address of the host, as kubelet. The metrics hold no pod names; see docs/allocator-daemon.md#metrics for the scrape config, alert rules and dashboard."},

		{Key: "network", Type: typeTable,
			Doc: "Where each partition's containerd, kubelet and allocator (and so its hostNetwork pods and the host side of its pod network) live on the network. " +
				"See docs/network.md for the uplinks, what each needs from the host and what breaks in `host` mode."},
		{Key: "network.mode", Type: typeString, Default: planner.NetworkNamespace,
			Allowed: []string{planner.NetworkNamespace, planner.NetworkHost},
			Doc: "`namespace`: each partition runs in a network namespace of its own (`np-<partition>`, under /run/netns) with an address of its own, its Node's InternalIP: " +
				"kube-proxy, the CNI add-on and hostNetwork agents (node_exporter, log and security agents) run once per partition as on any machine, and each kubelet listens on the standard ports in its namespace. " +
				"`host`: every partition shares the host's namespace and address, with ports of their own (`kubelet.port_stride`); hostNetwork DaemonSets then run N times in one namespace and collide."},
		{Key: "network.uplink", Type: typeString, Default: planner.UplinkBridge,
			Allowed: []string{planner.UplinkBridge, planner.UplinkMacvlan},
			Doc: "How the namespaces reach the host's network. " +
				"`bridge`: a veth per partition on a bridge of the host (`network.bridge`), which routes for the partitions' subnet and, with `network.nat`, masquerades their traffic leaving the host; other machines reach a partition's address only through a route to the subnet via this host. " +
				"`macvlan`: a macvlan per partition on the NIC `network.parent`, with an address on that NIC's own network (`network.subnet`): every partition is reachable like a machine of that network (the host itself cannot reach its macvlans through the parent, a kernel rule)."},
		{Key: "network.bridge", Type: typeString, Default: config.DefaultBridge,
			Doc: "The host bridge of the `bridge` uplink (created by apply, removed by remove); 1-15 characters."},
		{Key: "network.parent", Type: typeString, DefaultText: "none (required for `macvlan`)", Example: `"eth0"`,
			Doc: "The NIC the `macvlan` uplink's links sit on; it must exist on the host when planning."},
		{Key: "network.subnet", Type: typeString, DefaultText: "`" + config.DefaultBridgeSubnet + "` for `bridge`; required for `macvlan`", Example: `"192.168.10.0/24"`,
			Doc: "The IPv4 network the partitions' addresses are on: the bridge's own (it must not overlap a network of the host's interfaces), or for `macvlan` the parent NIC's network. " +
				"The addresses are given this network's length."},
		{Key: "network.gateway", Type: typeString, DefaultText: "`bridge`: the subnet's first address (the host's address on the bridge); `macvlan`: none (no default route)", Example: `"192.168.10.1"`,
			Doc: "The default route inside each partition's namespace; for `bridge` also the host's address on the bridge."},
		{Key: "network.pool", Type: typeString, DefaultText: "the whole subnet", Example: `"192.168.10.64/28"`,
			Doc: "Where partition addresses come from, in partition order: the first free host address for each partition without `partition[].address`. " +
				"Free means not the gateway, not an address of the host's interfaces, and not the network or broadcast address. Too small a pool is an error naming the partitions left without one."},
		{Key: "network.nat", Type: typeBool, DefaultText: "`true` for `bridge`", Example: `false`,
			Doc: "`bridge` only: masquerade the subnet's traffic that leaves the host through another interface (an nftables table `ip numa-partition` of its own). " +
				"Without it, the network must route the subnet to this host."},
		{Key: "network.mtu", Type: typeInt, Default: 0,
			Doc: "MTU of the bridge and the partitions' links; 0 follows the uplink (the parent NIC's, or that of the interface of the host's default route)."},
		{Key: "network.resolv_conf", Type: typePath, Default: config.DefaultResolvConf,
			Doc: "kubelet's `resolvConf`: the resolver file pods with `dnsPolicy: Default` get and cluster DNS's upstream. " +
				"A loopback resolver of the host (systemd-resolved's 127.0.0.53) is out of reach from a namespace: point it at `/run/systemd/resolve/resolv.conf` there."},

		{Key: "network.node_dirs", Type: typeStrings, DefaultText: "`" + `["` + strings.Join(config.DefaultNodeDirs, `", "`) + `"]` + "`", Example: `["/etc/cni/net.d", "/var/lib/calico"]`,
			Doc: "`namespace` mode: host paths at which every partition has a directory of its own, as a machine of its own would: `<path>-<partition>` on the host, bound at `<path>` in the partition's mount namespace (which its containerd, kubelet, CNI plugins and containers share). " +
				"What a CNI add-on's or node agent's DaemonSet writes there (flannel's `/run/flannel/subnet.env` and CNI config, IPAM state, pod logs) is then the partition's alone. " +
				"Each must lie below /etc, /run, /var/lib, /var/log or /var/cache (systemd creates both ends there) and, as `<path>` and as `<path>-<partition>`, outside the system's and numa-partition's own directories and every other path of a partition's; `[]` turns them off. " +
				"With `/var/log/pods` among them and `kubelet.pod_logs_dir` at its default, kubelet writes pod logs to `/var/log/pods` in its namespace (`/var/log/pods-<partition>` on the host). " +
				"`remove` leaves the `<path>-<partition>` directories, as it leaves each kubelet's root dir."},
		{Key: "network.local_devices", Type: typeBool, DefaultText: "`false`", Example: `true`,
			Doc: "`namespace` mode: move every network interface of a PCI function whose NUMA locality (`numa_node`) is one of a partition's nodes into that partition's namespace, SR-IOV virtual functions included, as a machine of its own would have its NICs. " +
				"The partition's `netns-<partition>.service` moves them in before containerd starts and back to the host's namespace when it stops. " +
				"A device that carries the host's own network stays with the host, with a warning: `network.parent`, a port of a bridge or bond, one with an address of the host or the host's default route. " +
				"Devices without locality (`numa_node` -1) stay too; list them in `partition[].local_devices`. See docs/network.md, \"Devices by NUMA locality\"."},
		{Key: "network.host_devices", Type: typeStrings, DefaultText: "none", Example: `["eno1"]`,
			Doc: "Network interfaces (by name or PCI address) that stay in the host's namespace whatever `local_devices` says. " +
				"The uplink is recognised by what the host shows when planning (an address, the default route, a bond or bridge it is a port of); at boot `numa-partition.service` plans before DHCP may have configured it: list the host's NICs here when `network.local_devices` is true and could otherwise take them."},

		{Key: "partition[]", Type: typeTables, DefaultText: "none",
			Doc: "Per-partition overrides. " +
				"`nodes` selects the partition that holds those nodes (they must lie within one partition; one entry per partition). " +
				"In `custom` mode without `partitioning.groups` the entries' `nodes` define the partitions. " +
				"Keys left out keep the `[kubelet]` value; `labels` and `taints` are added to the `[kubelet]` ones."},
		{Key: "partition[].nodes", Type: typeNodeList, DefaultText: "none (required)", Example: `[0]`,
			Doc: "Nodes that select the partition (or, in `custom` mode without groups, make it)."},
		{Key: "partition[].name", Type: typeString, DefaultText: "`node<first NUMA node with CPUs>`", Example: `"fast"`,
			Doc: "The partition's name, used in its slice, unit and path names. " +
				"Names are systemd slice names without `-` or `_` (systemd reads `-` as nesting and kubelet's systemd cgroup driver splits on it): " +
				"1-32 of `a-z0-9` starting with a letter, unique, and not " + strings.Join(validation.ReservedSliceNames(), ", ") + "."},
		{Key: "partition[].labels", Type: typeStringMap, DefaultText: "none", Example: `{ "example.com/tier" = "gold" }`,
			Doc: "Labels added to those of `kubelet.labels` for this partition; equal keys take this value."},
		{Key: "partition[].taints", Type: typeStrings, DefaultText: "none", Example: `["dedicated=gold:NoSchedule"]`,
			Doc: "Taints added to those of `kubelet.taints` for this partition."},
		{Key: "partition[].kubelet_binary", Type: typePath, DefaultText: "the `kubelet.binary` value", Example: `"/opt/kubernetes/v1.37.3/kubelet"`,
			Doc: "Replaces `kubelet.binary` for this partition: a new kubelet on one partition (a canary) while the others keep theirs. " +
				"A change restarts only this partition's kubelet (its pods keep running; `apply --drain` drains its Node first, as kubeadm's upgrade does); `status` shows each Node's kubelet version. docs/apply.md, \"Upgrading kubelet or containerd one partition at a time\"."},
		{Key: "partition[].containerd_binary", Type: typePath, DefaultText: "the `runtime.binary` value", Example: `"/opt/containerd/v2.2.1/bin/containerd"`,
			Doc: "Replaces `runtime.binary` for this partition (`runtime.mode = \"containerd\"` only: a shared runtime is not this tool's to run). " +
				"A change restarts only this partition's containerd (its containers keep running in their shims; `apply --drain` drains its Node first)."},
		{Key: "partition[].allocator_mode", Type: typeString, DefaultText: "the `allocator.mode` value", Example: `"nri"`,
			Allowed: []string{config.AllocatorModeAuto, config.AllocatorModeKubelet, config.AllocatorModeNRI},
			Doc:     "Replaces `allocator.mode` for this partition."},
		{Key: "partition[].address", Type: typeString, DefaultText: "the next free address of `network.pool`", Example: `"192.168.10.21"`,
			Doc: "The partition's address (namespace mode), an IPv4 host address of `network.subnet` without a length: its Node's InternalIP."},
		{Key: "partition[].local_devices", Type: typeStrings, DefaultText: "none", Example: `["ens5f1", "0000:3b:02.0"]`,
			Doc: "Network interfaces that move into the partition's namespace (namespace mode), by interface name or PCI address (every interface of that function), in addition to those of `network.local_devices`. " +
				"Each must be on one of the partition's NUMA nodes (or have no locality), in no other partition's list, and not carry the host's own network (`network.parent`, a port of a bridge or bond, an address of the host, the default route): those are errors."},
		{Key: "partition[].drop_in", Type: typeDropIn, DefaultText: "none", Example: `{ imageGCHighThresholdPercent = 90 }`,
			Doc: "KubeletConfiguration fields for this partition's kubelet, by the rules of `kubelet.drop_in`, written to `<config_path>.d/" + planner.PartitionDropInFile + "`: " +
				"kubelet merges them over `kubelet.drop_in`'s, so they add to them and replace them field by field."},
	}
	byKey := map[string]KeyDoc{}
	for _, r := range refs {
		byKey[r.Key] = r
	}
	// The partition[] overrides are KubeletOverrides' fields, each
	// documented as its kubelet key, with an example of its own.
	for _, f := range reflect.VisibleFields(reflect.TypeOf(config.KubeletOverrides{})) {
		key := f.Tag.Get("toml")
		k := byKey["kubelet."+key]
		refs = append(refs, KeyDoc{Key: "partition[]." + key, Type: k.Type, DefaultText: "the `[kubelet]` value",
			Allowed: k.Allowed, Example: f.Tag.Get("example"),
			Doc: "Replaces `kubelet." + key + "` for this partition."})
	}
	return refs
}

// tomlValue writes a default as TOML. Defaults are plain ASCII, which
// Go's quoting writes as TOML basic strings.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case int:
		return fmt.Sprintf("%d", v)
	case []string:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprintf("%q", x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []int:
		parts := make([]string, len(v))
		for i, n := range v {
			parts[i] = fmt.Sprintf("%d", n)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]string:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%q = %q", k, v[k])
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	// Unreachable for the table above; the tests parse every default.
	return fmt.Sprintf("%v", v)
}
