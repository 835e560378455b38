package validation

import (
	"maps"
	"slices"
)

// kubeletSetting is one kubelet setting numa-partition refuses to a
// user: the flag that sets it in extra_args and the KubeletConfiguration
// field that sets it in a drop-in (kubelet.drop_in, partition.drop_in).
// A managed setting is one the tool decides for each partition, with
// the config key that sets the value instead; a denied one no
// partition's kubelet may have, with why.
type kubeletSetting struct {
	flag  string // "--flag", "" when only the configuration file sets it
	field string // a field, dotted inside a table; "" when only the command line sets it
	key   string // the config key to set instead, "" when the tool decides it alone
	// denied says why no partition's kubelet may have it; "" for a
	// managed setting.
	denied string
}

// kubeletSettings are the kubelet settings numa-partition refuses, one
// entry for each whichever way it is written. kubelet's flags win over
// its configuration file and a drop-in merges over the rendered one, so
// a managed flag in extra_args or a managed field in a drop-in would
// override the partition's share of the machine, its identity or its
// security; kubeletgen sets each managed field (a test holds the two
// together). A denied setting stops the kubelet, keeps its Node out of
// the cluster or makes it act as something else, and is no setting a
// partition needs (#38: --version=true made kubelet exit at every start,
// a restart loop; --lock-file made every partition's kubelet wait for
// one lock). A closed allow list was the other choice: docs/config.md
// says why not. ExtraArgProblem refuses the flags, DropInProblems the
// fields.
var kubeletSettings = []kubeletSetting{
	// The command line of each kubelet (slices/render kubeletArgs).
	{flag: "--config", key: "kubelet.config_path"},
	{flag: "--kubeconfig", key: "kubelet.kubeconfig"},
	{flag: "--bootstrap-kubeconfig", key: "kubelet.bootstrap_kubeconfig"},
	{flag: "--cert-dir", key: "kubelet.cert_dir"},
	{flag: "--root-dir", key: "kubelet.root_dir"},
	{flag: "--hostname-override", key: "kubelet.node_name"},
	{flag: "--node-ip", key: "partition[].address"},
	{flag: "--node-labels", key: "kubelet.labels"},
	// Its drop-ins, checked field by field, are the config's.
	{flag: "--config-dir", key: "kubelet.drop_in"},

	// The file a drop-in merges over is a KubeletConfiguration.
	{field: "apiVersion"},
	{field: "kind"},
	// The partition's identity in its KubeletConfiguration (kubeletgen):
	// its runtime, cgroups, ports and files.
	{flag: "--container-runtime-endpoint", field: "containerRuntimeEndpoint", key: "runtime.endpoint"},
	{flag: "--image-service-endpoint", field: "imageServiceEndpoint", key: "runtime.endpoint"},
	{flag: "--cgroup-driver", field: "cgroupDriver"},
	{flag: "--cgroup-root", field: "cgroupRoot"},
	{flag: "--cgroups-per-qos", field: "cgroupsPerQOS"},
	{flag: "--kubelet-cgroups", field: "kubeletCgroups"},
	{flag: "--system-cgroups", field: "systemCgroups"},
	{flag: "--port", field: "port", key: "kubelet.port"},
	{flag: "--healthz-port", field: "healthzPort", key: "kubelet.healthz_port"},
	{flag: "--healthz-bind-address", field: "healthzBindAddress"},
	{flag: "--read-only-port", field: "readOnlyPort", key: "kubelet.read_only_port"},
	{flag: "--pod-manifest-path", field: "staticPodPath", key: "kubelet.static_pod_path"},
	{field: "podLogsDir", key: "kubelet.pod_logs_dir"},
	{flag: "--max-pods", field: "maxPods", key: "kubelet.max_pods"},
	{flag: "--register-with-taints", field: "registerWithTaints", key: "kubelet.taints"},
	{flag: "--cluster-dns", field: "clusterDNS", key: "kubelet.cluster_dns"},
	{flag: "--cluster-domain", field: "clusterDomain", key: "kubelet.cluster_domain"},
	{flag: "--resolv-conf", field: "resolvConf", key: "network.resolv_conf"},
	{flag: "--fail-cgroupv1", field: "failCgroupV1"},
	// Its serving security, as kubeadm sets it up. The fields are inside
	// tables the user may otherwise extend (authentication.webhook.cacheTTL
	// is the user's).
	{flag: "--anonymous-auth", field: "authentication.anonymous.enabled"},
	{flag: "--authentication-token-webhook", field: "authentication.webhook.enabled"},
	{flag: "--client-ca-file", field: "authentication.x509.clientCAFile"},
	{flag: "--authorization-mode", field: "authorization.mode"},
	{flag: "--rotate-certificates", field: "rotateCertificates"},
	// Its share of the machine.
	{flag: "--cpu-manager-policy", field: "cpuManagerPolicy", key: "kubelet.cpu_manager_policy"},
	{flag: "--cpu-manager-policy-options", field: "cpuManagerPolicyOptions", key: "kubelet.cpu_manager_policy_options"},
	{flag: "--reserved-cpus", field: "reservedSystemCPUs", key: "host.reserved_cpus"},
	{flag: "--kube-reserved", field: "kubeReserved", key: "kubelet.kube_reserved_memory"},
	{flag: "--system-reserved", field: "systemReserved", key: "kubelet.system_reserved_memory"},
	{flag: "--eviction-hard", field: "evictionHard", key: "kubelet.eviction_hard_memory"},
	{field: "mergeDefaultEvictionSettings"},
	{flag: "--enforce-node-allocatable", field: "enforceNodeAllocatable"},
	{flag: "--memory-manager-policy", field: "memoryManagerPolicy", key: "kubelet.memory_manager_policy"},
	{flag: "--reserved-memory", field: "reservedMemory", key: "host.reserved_memory"},
	{flag: "--topology-manager-policy", field: "topologyManagerPolicy", key: "kubelet.topology_manager_policy"},
	{flag: "--topology-manager-scope", field: "topologyManagerScope", key: "kubelet.topology_manager_scope"},
	{flag: "--topology-manager-policy-options", field: "topologyManagerPolicyOptions", key: "kubelet.topology_manager_options"},

	// Denied.
	{flag: "--version", denied: "it prints the version and exits, so the unit restarts forever"},
	{flag: "--help", denied: "it prints the usage and exits, so the unit restarts forever"},
	{flag: "--runonce", field: "runOnce", denied: "it runs the static pods once and exits"},
	{flag: "--register-node", field: "registerNode", denied: "the partition's Node must register with the API server, or no pod reaches it"},
	{flag: "--register-schedulable", denied: "the partition's Node must be schedulable; cordon it with kubectl instead"},
	{flag: "--lock-file", denied: "every partition's kubelet would wait for, or exit on, one lock"},
	{flag: "--exit-on-lock-contention", denied: "it goes with --lock-file, which a partition's kubelet may not have"},
	{flag: "--provider-id", field: "providerID", denied: "it names the cloud instance the Node is, which every partition would claim"},
	{flag: "--manifest-url", field: "staticPodURL", denied: "it runs the static pods a URL serves in every partition; use kubelet.static_pod_path"},
	{flag: "--manifest-url-header", field: "staticPodURLHeader", denied: "it goes with --manifest-url, which a partition's kubelet may not have"},
	{flag: "--runtime-cgroups", denied: "numa-partition places the partition's runtime in its slice"},
	{flag: "--kube-reserved-cgroup", field: "kubeReservedCgroup", denied: "numa-partition decides the partition's cgroups"},
	{flag: "--system-reserved-cgroup", field: "systemReservedCgroup", denied: "numa-partition decides the partition's cgroups"},
}

// The refusals' lookups, derived from kubeletSettings: the managed flags
// and fields with their config keys, the denied ones with why.
var (
	managedFlags  = settingsBy(func(s kubeletSetting) (string, string, bool) { return s.flag, s.key, s.denied == "" })
	managedFields = settingsBy(func(s kubeletSetting) (string, string, bool) { return s.field, s.key, s.denied == "" })
	deniedFlags   = settingsBy(func(s kubeletSetting) (string, string, bool) { return s.flag, s.denied, s.denied != "" })
	deniedFields  = settingsBy(func(s kubeletSetting) (string, string, bool) { return s.field, s.denied, s.denied != "" })
)

// settingsBy maps the name of each setting pick takes (one with no such
// name is left out) to its value.
func settingsBy(pick func(kubeletSetting) (name, value string, ok bool)) map[string]string {
	m := map[string]string{}
	for _, s := range kubeletSettings {
		if name, value, ok := pick(s); ok && name != "" {
			m[name] = value
		}
	}
	return m
}

// ManagedFlags lists the managed flags, sorted, for the reference.
func ManagedFlags() []string { return slices.Sorted(maps.Keys(managedFlags)) }

// DeniedFlags lists the denied flags, sorted, for the reference.
func DeniedFlags() []string { return slices.Sorted(maps.Keys(deniedFlags)) }

// ManagedFields lists the managed fields, sorted, for the reference and
// the test that holds kubeletgen to it.
func ManagedFields() []string { return slices.Sorted(maps.Keys(managedFields)) }

// DeniedFields lists the denied fields, sorted, for the reference.
func DeniedFields() []string { return slices.Sorted(maps.Keys(deniedFields)) }
