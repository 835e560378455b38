package validation

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// before are the four tables as they were written out literally, flag
// by flag and field by field, before one table of kubelet settings
// (kubeletSettings) replaced them: the flags and fields refused, with the
// config key to set instead or why not. The sets derived from
// kubeletSettings must be these, so no flag or field refused before is
// allowed now, or the other way round, and every message says what it
// said.
var before = map[string]map[string]string{
	"managedFlags": {
		"--anonymous-auth":                  "",
		"--authentication-token-webhook":    "",
		"--authorization-mode":              "",
		"--bootstrap-kubeconfig":            "kubelet.bootstrap_kubeconfig",
		"--cert-dir":                        "kubelet.cert_dir",
		"--cgroup-driver":                   "",
		"--cgroup-root":                     "",
		"--cgroups-per-qos":                 "",
		"--client-ca-file":                  "",
		"--cluster-dns":                     "kubelet.cluster_dns",
		"--cluster-domain":                  "kubelet.cluster_domain",
		"--config":                          "kubelet.config_path",
		"--config-dir":                      "kubelet.drop_in",
		"--container-runtime-endpoint":      "runtime.endpoint",
		"--cpu-manager-policy":              "kubelet.cpu_manager_policy",
		"--cpu-manager-policy-options":      "kubelet.cpu_manager_policy_options",
		"--enforce-node-allocatable":        "",
		"--eviction-hard":                   "kubelet.eviction_hard_memory",
		"--fail-cgroupv1":                   "",
		"--healthz-bind-address":            "",
		"--healthz-port":                    "kubelet.healthz_port",
		"--hostname-override":               "kubelet.node_name",
		"--image-service-endpoint":          "runtime.endpoint",
		"--kube-reserved":                   "kubelet.kube_reserved_memory",
		"--kubeconfig":                      "kubelet.kubeconfig",
		"--kubelet-cgroups":                 "",
		"--max-pods":                        "kubelet.max_pods",
		"--memory-manager-policy":           "kubelet.memory_manager_policy",
		"--node-ip":                         "partition[].address",
		"--node-labels":                     "kubelet.labels",
		"--pod-manifest-path":               "kubelet.static_pod_path",
		"--port":                            "kubelet.port",
		"--read-only-port":                  "kubelet.read_only_port",
		"--register-with-taints":            "kubelet.taints",
		"--reserved-cpus":                   "host.reserved_cpus",
		"--reserved-memory":                 "host.reserved_memory",
		"--resolv-conf":                     "network.resolv_conf",
		"--root-dir":                        "kubelet.root_dir",
		"--rotate-certificates":             "",
		"--system-cgroups":                  "",
		"--system-reserved":                 "kubelet.system_reserved_memory",
		"--topology-manager-policy":         "kubelet.topology_manager_policy",
		"--topology-manager-policy-options": "kubelet.topology_manager_options",
		"--topology-manager-scope":          "kubelet.topology_manager_scope",
	},
	"deniedFlags": {
		"--exit-on-lock-contention": "it goes with --lock-file, which a partition's kubelet may not have",
		"--help":                    "it prints the usage and exits, so the unit restarts forever",
		"--kube-reserved-cgroup":    "numa-partition decides the partition's cgroups",
		"--lock-file":               "every partition's kubelet would wait for, or exit on, one lock",
		"--manifest-url":            "it runs the static pods a URL serves in every partition; use kubelet.static_pod_path",
		"--manifest-url-header":     "it goes with --manifest-url, which a partition's kubelet may not have",
		"--provider-id":             "it names the cloud instance the Node is, which every partition would claim",
		"--register-node":           "the partition's Node must register with the API server, or no pod reaches it",
		"--register-schedulable":    "the partition's Node must be schedulable; cordon it with kubectl instead",
		"--runonce":                 "it runs the static pods once and exits",
		"--runtime-cgroups":         "numa-partition places the partition's runtime in its slice",
		"--system-reserved-cgroup":  "numa-partition decides the partition's cgroups",
		"--version":                 "it prints the version and exits, so the unit restarts forever",
	},
	"managedFields": {
		"apiVersion":                       "",
		"authentication.anonymous.enabled": "",
		"authentication.webhook.enabled":   "",
		"authentication.x509.clientCAFile": "",
		"authorization.mode":               "",
		"cgroupDriver":                     "",
		"cgroupRoot":                       "",
		"cgroupsPerQOS":                    "",
		"clusterDNS":                       "kubelet.cluster_dns",
		"clusterDomain":                    "kubelet.cluster_domain",
		"containerRuntimeEndpoint":         "runtime.endpoint",
		"cpuManagerPolicy":                 "kubelet.cpu_manager_policy",
		"cpuManagerPolicyOptions":          "kubelet.cpu_manager_policy_options",
		"enforceNodeAllocatable":           "",
		"evictionHard":                     "kubelet.eviction_hard_memory",
		"failCgroupV1":                     "",
		"healthzBindAddress":               "",
		"healthzPort":                      "kubelet.healthz_port",
		"imageServiceEndpoint":             "runtime.endpoint",
		"kind":                             "",
		"kubeReserved":                     "kubelet.kube_reserved_memory",
		"kubeletCgroups":                   "",
		"maxPods":                          "kubelet.max_pods",
		"memoryManagerPolicy":              "kubelet.memory_manager_policy",
		"mergeDefaultEvictionSettings":     "",
		"podLogsDir":                       "kubelet.pod_logs_dir",
		"port":                             "kubelet.port",
		"readOnlyPort":                     "kubelet.read_only_port",
		"registerWithTaints":               "kubelet.taints",
		"reservedMemory":                   "host.reserved_memory",
		"reservedSystemCPUs":               "host.reserved_cpus",
		"resolvConf":                       "network.resolv_conf",
		"rotateCertificates":               "",
		"staticPodPath":                    "kubelet.static_pod_path",
		"systemCgroups":                    "",
		"systemReserved":                   "kubelet.system_reserved_memory",
		"topologyManagerPolicy":            "kubelet.topology_manager_policy",
		"topologyManagerPolicyOptions":     "kubelet.topology_manager_options",
		"topologyManagerScope":             "kubelet.topology_manager_scope",
	},
	"deniedFields": {
		"kubeReservedCgroup": "numa-partition decides the partition's cgroups",
		"providerID":         "it names the cloud instance the Node is, which every partition would claim",
		"registerNode":       "the partition's Node must register with the API server, or no pod reaches it",
		// Refused since the table was made one: --runonce was, its field not.
		"runOnce":              "it runs the static pods once and exits",
		"staticPodURL":         "it runs the static pods a URL serves in every partition; use kubelet.static_pod_path",
		"staticPodURLHeader":   "it goes with --manifest-url, which a partition's kubelet may not have",
		"systemReservedCgroup": "numa-partition decides the partition's cgroups",
	},
}

func TestKubeletSettingsKeepTheRefusals(t *testing.T) {
	after := map[string]map[string]string{
		"managedFlags": managedFlags, "deniedFlags": deniedFlags,
		"managedFields": managedFields, "deniedFields": deniedFields,
	}
	for _, name := range slices.Sorted(maps.Keys(before)) {
		t.Logf("%s before: %s", name, strings.Join(slices.Sorted(maps.Keys(before[name])), " "))
		t.Logf("%s after:  %s", name, strings.Join(slices.Sorted(maps.Keys(after[name])), " "))
		assert.Equal(t, before[name], after[name], name)
	}
	// Each is refused, by the function that refuses it.
	for flag := range before["managedFlags"] {
		assert.Contains(t, ExtraArgProblem(flag+"=x"), "which numa-partition sets for each partition", flag)
	}
	for flag := range before["deniedFlags"] {
		assert.Contains(t, ExtraArgProblem(flag+"=x"), "which no partition's kubelet may have", flag)
	}
	for field := range before["managedFields"] {
		assert.Contains(t, strings.Join(problems(map[string]any{field: 1}), "\n"), "which numa-partition sets for each partition", field)
	}
	for field := range before["deniedFields"] {
		assert.Contains(t, strings.Join(problems(map[string]any{field: 1}), "\n"), "which no partition's kubelet may have", field)
	}
}

// Each flag and each field is in one entry of kubeletSettings, so a rule
// is written once (settingsBy would keep the last of two silently), each
// entry is managed or denied, with a name to refuse, and each field is
// one of KubeletConfiguration's.
func TestKubeletSettingsOnePlaceEach(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range kubeletSettings {
		assert.True(t, s.flag != "" || s.field != "", "an entry with neither flag nor field: %+v", s)
		assert.False(t, s.key != "" && s.denied != "", "an entry both managed (key) and denied: %+v", s)
		for _, name := range []string{s.flag, s.field} {
			if name == "" {
				continue
			}
			assert.False(t, seen[name], "%s is in two entries", name)
			seen[name] = true
		}
		if s.field != "" {
			top, _, _ := strings.Cut(s.field, ".")
			_, exact := knownField(top)
			assert.True(t, exact, "%s is not a field of KubeletConfiguration", s.field)
		}
		if s.flag != "" {
			assert.True(t, strings.HasPrefix(s.flag, "--") && strings.ToLower(s.flag) == s.flag && !strings.Contains(s.flag, "_"), "%s is not written as kubelet's flag set names it", s.flag)
		}
	}
}
