package planner

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// planErr plans config text on a machine and returns the error text.
func planErr(t *testing.T, s spec, text string) string {
	t.Helper()
	c, err := config.Parse("config.toml", []byte(text))
	require.NoError(t, err)
	if c.Kubelet.Hostname == "" {
		c.Kubelet.Hostname = "h"
	}
	p, err := NewPlan(synth(s), c)
	require.Error(t, err, "plan: %+v", p)
	var es config.Errors
	require.True(t, errors.As(err, &es), "errors are config.Errors")
	return err.Error()
}

// One case per rule: each asserts the whole message, since the message is
// the product here (it must name the key and say what is allowed).
func TestValidationErrors(t *testing.T) {
	amd := spec{sockets: 2, nodesPerSocket: 2, coresPerNode: 2}
	tests := []struct {
		name   string
		spec   spec
		config string
		want   string
	}{
		{"reserved CPUs outside the machine", seedSpec, "[host]\nreserved_cpus = \"0-999\"",
			`config.toml:2: key "host.reserved_cpus": "0-999" names CPUs 8-999 that the machine does not have (it has 0-7)` + "\n" +
				`config.toml:2: key "host.reserved_cpus": leaves partition node0 (nodes 0) with no CPU: all of its CPUs 0-3 are reserved for the host` + "\n" +
				`config.toml:2: key "host.reserved_cpus": leaves partition node1 (nodes 1) with no CPU: all of its CPUs 4-7 are reserved for the host`},
		{"reserved CPUs malformed", seedSpec, "[host]\nreserved_cpus = \"zero\"",
			`config.toml:2: key "host.reserved_cpus": "zero" is neither "auto" nor a CPU list like "0,4" or "0-1,32-33": ` + cpuListErr(t, "zero")},
		{"reserved CPUs leave a partition empty", seedSpec, "[host]\nreserved_cpus = \"4-7\"",
			`config.toml:2: key "host.reserved_cpus": leaves partition node1 (nodes 1) with no CPU: all of its CPUs 4-7 are reserved for the host`},
		{"overlapping groups", amd, "[partitioning]\nmode = \"custom\"\ngroups = [[0,1],[1,2,3]]",
			`config.toml:3: key "partitioning.groups[1]": nodes 1 are already in partitioning.groups[0]; groups must not overlap`},
		{"unknown nodes in a group", amd, "[partitioning]\nmode = \"custom\"\ngroups = [[0,1],[2,3,9]]",
			`config.toml:3: key "partitioning.groups[1]": names nodes 9 that the machine does not have (it has 0-3)`},
		{"CPU node in no group", amd, "[partitioning]\nmode = \"custom\"\ngroups = [[0,1],[2]]",
			`config.toml:3: key "partitioning.groups": nodes 3 have CPUs 6-7 but are in no group; add them to a group or to partitioning.exclude_nodes`},
		{"unknown excluded node", amd, "[partitioning]\nexclude_nodes = \"4\"",
			`config.toml:2: key "partitioning.exclude_nodes": names nodes 4 that the machine does not have (it has 0-3)`},
		// Issue 27: a socket group with a newline was planned (and went
		// into the plan file the allocator reads).
		{"socket group with a newline", seedSpec, "[allocator]\nsocket_group = \"kube\\nExecStartPre=/x\"",
			`config.toml:2: key "allocator.socket_group": "kube\nExecStartPre=/x" is not a group name or gid (allowed: a letter or '_', then up to 31 letters, digits, '_', '.', '-'; or a number)`},
		{"bad mode", amd, "[partitioning]\nmode = \"die\"",
			`config.toml:2: key "partitioning.mode": "die" is not a mode (allowed: socket, node, custom)`},
		{"groups without custom", amd, "[partitioning]\ngroups = [[0]]",
			`config.toml:2: key "partitioning.groups": groups are only read with mode = "custom" (mode is "socket")`},
		{"partition with no CPU (memory-only group)", spec{sockets: 1, nodesPerSocket: 1, coresPerNode: 2, memOnly: 1}, "[partitioning]\nmode = \"custom\"\n[[partition]]\nnodes = [0]\n[[partition]]\nname = \"mem\"\nnodes = [1]",
			`config.toml:6: key "partition[1].name": partition mem (nodes 1) has no online CPU; give its nodes to a partition with CPUs`},
		{"port collision inside the plan", seedSpec, "[kubelet]\nport_stride = 2\n[network]\nmode = \"host\"",
			`config.toml:1: key "kubelet.healthz_port": healthz_port of partition node1 is 10250, already the port of partition node0 (key kubelet.port); change the bases or kubelet.port_stride`},
		{"cluster DNS not an IP", seedSpec, "[kubelet]\ncluster_dns = [\"10.96.0.10\", \"dns.local\"]",
			`config.toml:2: key "kubelet.cluster_dns": "dns.local" is not an IP address (allowed: IPv4 or IPv6 addresses of the cluster DNS service)`},
		{"well-known port", seedSpec, "[kubelet]\nport = 10249\n[network]\nmode = \"host\"",
			`config.toml:2: key "kubelet.port": port of partition node0 is 10249, the port of kube-proxy metrics; change the base or kubelet.port_stride` + "\n" +
				`config.toml:2: key "kubelet.port": port of partition node1 is 10259, the port of kube-scheduler; change the base or kubelet.port_stride`},
		{"port out of range", seedSpec, "[kubelet]\nport = 65530\n[network]\nmode = \"host\"",
			`config.toml:2: key "kubelet.port": partition node1 gets port 65540, outside 1-65535 (lower the base or kubelet.port_stride)`},
		{"invalid label key", seedSpec, "[kubelet.labels]\n\"bad key!\" = \"x\"",
			`config.toml:2: key "kubelet.labels.bad key!": label key "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"invalid label value", seedSpec, "[[partition]]\nnodes = [0]\nlabels = { tier = \"-gold\" }",
			`config.toml:3: key "partition[0].labels.tier": label "tier" value "-gold": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{"restricted label namespace", seedSpec, "[kubelet]\nlabels = { \"node-role.kubernetes.io/worker\" = \"\" }",
			`config.toml:2: key "kubelet.labels.node-role.kubernetes.io/worker": label key "node-role.kubernetes.io/worker" is in a namespace kubelet may not set (kubernetes.io, k8s.io); allowed there are the kubelet.kubernetes.io/ and node.kubernetes.io/ prefixes and the well-known topology labels`},
		{"hugepages larger than the node", seedSpec, "[[host.hugepages]]\nsize = \"1Gi\"\ncount = 16",
			`config.toml:1: key "host.hugepages": node 0 (partition node0): hugepages 16 × 1Gi = 16Gi plus 1100Mi reserved exceed its memory 16Gi` + "\n" +
				`config.toml:1: key "host.hugepages": node 1 (partition node1): hugepages 16 × 1Gi = 16Gi plus 1100Mi reserved exceed its memory 16Gi`},
		{"unsupported page size", spec{sockets: 1, nodesPerSocket: 1, coresPerNode: 2, pageSizes: []uint64{2 << 20}}, "[[host.hugepages]]\nsize = \"1Gi\"\ncount = 1",
			`config.toml:2: key "host.hugepages[0].size": node 0 has no 1Gi pages (its sizes: 2Mi)`},
		{"malformed size", seedSpec, "[kubelet]\nkube_reserved_memory = \"lots\"\n[[host.hugepages]]\nsize = \"2M B\"",
			`config.toml:2: key "kubelet.kube_reserved_memory": ` + sizeErr(t, "lots") + "\n" +
				`config.toml:4: key "host.hugepages[0].size": ` + sizeErr(t, "2M B")},
		{"page size not a power of two", seedSpec, "[[host.hugepages]]\nsize = \"3Mi\"",
			`config.toml:2: key "host.hugepages[0].size": "3Mi" is not a page size (a power of two of at least 4Ki, like "2Mi" or "1Gi")`},
		{"reserved memory not matching kubelet", seedSpec, "[host]\nreserved_memory = { 0 = \"1Gi\" }",
			`config.toml:2: key "host.reserved_memory": partition node0 reserves 1Gi on nodes 0 but its kubelet reserves kube 500Mi + system 500Mi + eviction 100Mi = 1100Mi; kubelet's Memory Manager needs both equal`},
		{"reserved memory on unknown node", seedSpec, "[host.reserved_memory]\n7 = \"1Gi\"",
			`config.toml:2: key "host.reserved_memory.7": node 7 does not exist on this machine (it has 0-1)`},
		{"reservation larger than the node", spec{sockets: 1, nodesPerSocket: 1, coresPerNode: 2, mem: 1 << 30}, "",
			`config.toml: key "kubelet.kube_reserved_memory": node 0 (partition node0) has 1Gi of memory, less than the 1100Mi its kubelet reserves there (kube + system + eviction); lower them or spread them with host.reserved_memory`},
		{"name with a dash", seedSpec, "[[partition]]\nnodes = [0]\nname = \"fast-a\"",
			`config.toml:3: key "partition[0].name": partition name "fast-a" contains '-' or '_': systemd reads '-' as slice nesting and kubelet's systemd cgroup driver splits on it (allowed: 1-32 of a-z, 0-9, starting with a letter)`},
		{"name with capitals", seedSpec, "[[partition]]\nnodes = [0]\nname = \"Fast\"",
			`config.toml:3: key "partition[0].name": partition name "Fast" is not a valid slice name part (allowed: 1-32 of a-z, 0-9, starting with a letter)`},
		{"reserved slice name", seedSpec, "[[partition]]\nnodes = [0]\nname = \"system\"",
			`config.toml:3: key "partition[0].name": partition name "system" is taken by systemd or kubelet (system.slice); choose another`},
		{"duplicate names", seedSpec, "[[partition]]\nnodes = [0]\nname = \"a\"\n[[partition]]\nnodes = [1]\nname = \"a\"",
			`config.toml:6: key "partition[1].name": partitions 0 (nodes 0) and 1 (nodes 1) are both named "a"; names must be unique`},
		{"override spanning partitions", seedSpec, "[[partition]]\nnodes = [0,1]",
			`config.toml:2: key "partition[0].nodes": nodes 0-1 span partitions 0 and 1; an entry overrides one partition`},
		{"override without nodes", seedSpec, "[[partition]]\nname = \"x\"",
			`config.toml:1: key "partition[0]": needs nodes to say which partition it overrides (e.g. nodes = [0])`},
		{"shared node name", seedSpec, "[kubelet]\nnode_name = \"{hostname}\"",
			`config.toml:2: key "kubelet.node_name": partitions node0 and node1 both get node name "h"; add {partition} to the template`},
		// The device plugins dir follows root_dir to the path kubelet
		// hard-codes, which render used to refuse alone (#24).
		{"shared root dir", seedSpec, "[kubelet]\nroot_dir = \"/var/lib/kubelet\"",
			`config.toml:1: key "kubelet.device_plugins_dir": "/var/lib/kubelet/device-plugins" is the shared path itself, which kubelet hard-codes and the partition's own directory is bound over: give the partition its own directory` + "\n" +
				`config.toml:2: key "kubelet.root_dir": partitions node0 and node1 both get /var/lib/kubelet; put {partition} in the template`},
		{"relative path", seedSpec, "[kubelet]\npod_logs_dir = \"logs-{partition}\"",
			`config.toml:2: key "kubelet.pod_logs_dir": "logs-node0" is not an absolute path` + "\n" +
				`config.toml:2: key "kubelet.pod_logs_dir": "logs-node1" is not an absolute path`},
		{"unknown placeholder", seedSpec, "[allocator]\nsocket = \"/run/{name}.sock\"",
			`config.toml:2: key "allocator.socket": "/run/{name}.sock" uses unknown placeholders {name} (allowed: {partition}, {index}, {hostname}, {root_dir})` + "\n" +
				`config.toml:2: key "allocator.socket": partitions node0 and node1 both get /run/{name}.sock; put {partition} in the template`},
		{"bad policies", seedSpec, "[kubelet]\ncpu_manager_policy = \"Static\"\nmemory_manager_policy = \"static\"\ntopology_manager_policy = \"strict\"\ntopology_manager_scope = \"node\"",
			`config.toml:2: key "kubelet.cpu_manager_policy": "Static" is not allowed (allowed: none, static)` + "\n" +
				`config.toml:3: key "kubelet.memory_manager_policy": "static" is not allowed (allowed: None, Static)` + "\n" +
				`config.toml:4: key "kubelet.topology_manager_policy": "strict" is not allowed (allowed: none, best-effort, restricted, single-numa-node)` + "\n" +
				`config.toml:5: key "kubelet.topology_manager_scope": "node" is not allowed (allowed: container, pod)`},
		{"strict CPU reservation turned off", seedSpec, "[kubelet.cpu_manager_policy_options]\nstrict-cpu-reservation = \"false\"",
			`config.toml:2: key "kubelet.cpu_manager_policy_options.strict-cpu-reservation": "false": it must be "true" under the static policy (the reserved CPUs are the other partitions')`},
		{"bad options", seedSpec, "[kubelet.cpu_manager_policy_options]\nfull-pcpus-only = \"yes\"\nturbo = \"true\"\n[kubelet.topology_manager_options]\nmax-allowable-numa-nodes = \"4\"",
			`config.toml:2: key "kubelet.cpu_manager_policy_options.full-pcpus-only": "yes" is not a boolean (allowed: "true", "false")` + "\n" +
				`config.toml:3: key "kubelet.cpu_manager_policy_options.turbo": unknown CPU manager option (allowed: align-by-socket, distribute-cpus-across-cores, distribute-cpus-across-numa, full-pcpus-only, prefer-align-cpus-by-uncorecache, strict-cpu-reservation)` + "\n" +
				`config.toml:5: key "kubelet.topology_manager_options.max-allowable-numa-nodes": "4": allowed is a whole number of at least 8`},
		{"static memory manager without reservation", seedSpec, "[kubelet]\nkube_reserved_memory = \"0\"\nsystem_reserved_memory = \"0\"\neviction_hard_memory = \"0\"",
			`config.toml:2: key "kubelet.kube_reserved_memory": partition node0: the Static memory manager needs some reserved memory, and kube, system and eviction reservations are all 0` + "\n" +
				`config.toml:2: key "kubelet.kube_reserved_memory": partition node1: the Static memory manager needs some reserved memory, and kube, system and eviction reservations are all 0`},
		{"extra args fighting managed flags", seedSpec, "[kubelet]\nextra_args = [\"--root-dir=/x\", \"v=2\"]",
			`config.toml:2: key "kubelet.extra_args": "--root-dir=/x" sets --root-dir, which numa-partition sets for each partition (set kubelet.root_dir instead; the managed flags are listed under kubelet.extra_args in docs/config-reference.md)` + "\n" +
				`config.toml:2: key "kubelet.extra_args": "v=2" is not a flag (write "--flag=value")`},
		{"shared runtime without endpoint", seedSpec, "[runtime]\nmode = \"shared\"\n[network]\nmode = \"host\"",
			`config.toml:1: key "runtime.endpoint": is required with mode = "shared" (e.g. "unix:///run/containerd/containerd.sock")`},
		{"bad runtime mode", seedSpec, "[runtime]\nmode = \"docker\"",
			`config.toml:2: key "runtime.mode": "docker" is not a runtime mode (allowed: containerd, shared)`},
		{"bad sandbox image", seedSpec, "[runtime]\nsandbox_image = \"Pause:\\\"3\\\"\"",
			`config.toml:2: key "runtime.sandbox_image": "Pause:\"3\"" is not an image reference (form: [registry/]name[:tag][@sha256:digest], lowercase name)`},
		{"relative CNI dir", seedSpec, "[runtime]\ncni_conf_dir = \"net.d\"",
			`config.toml:2: key "runtime.cni_conf_dir": "net.d" is not an absolute path`},
		{"bad taint", seedSpec, "[kubelet]\ntaints = [\"a=b:Never\"]",
			`config.toml:2: key "kubelet.taints": taint "a=b:Never": effect "Never" is not NoSchedule, PreferNoSchedule or NoExecute`},
		// A [[partition]]'s taint was reported at kubelet.taints (no line).
		{"bad partition taint", seedSpec, "[[partition]]\nnodes = [1]\ntaints = [\"a=b:Never\"]",
			`config.toml:3: key "partition[0].taints": taint "a=b:Never": effect "Never" is not NoSchedule, PreferNoSchedule or NoExecute`},
		{"empty hostname", seedSpec, "[kubelet]\nhostname = \" \"",
			`config.toml:2: key "kubelet.hostname": is empty; the CLI fills it from the host name, set it when planning for another machine`},
		// Issue 36: every Node is labelled with its host's name, which a
		// label value must be able to carry.
		{"hostname too long for the host label", seedSpec, "[kubelet]\nhostname = \"" + strings.Repeat("h", 64) + "\"",
			`config.toml:2: key "kubelet.hostname": label "numa-partition.io/host" value "` + strings.Repeat("h", 64) + `": must be no more than 63 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, planErr(t, tt.spec, tt.config))
		})
	}
}

// Several problems are reported together, in file order.
func TestValidationReportsEverything(t *testing.T) {
	got := planErr(t, seedSpec, `[partitioning]
mode = "node"
[host]
reserved_cpus = "0-99"
[kubelet]
max_pods = 0
labels = { "a b" = "c" }
`)
	lines := 0
	for _, prefix := range []string{"config.toml:4:", "config.toml:6:", "config.toml:7:"} {
		assert.Contains(t, got, prefix)
		lines++
	}
	assert.GreaterOrEqual(t, len(splitLines(got)), lines)
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range s {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// Issue 24 item 3: kubelet's flag set reads '_' as '-', takes the next
// argument as a flag's value, and lets flags override its config file:
// --root_dir=, --hostname_override=, --node_labels= passed, and so did
// --container-runtime-endpoint= naming another partition's containerd.
// Every managed flag is refused in every spelling kubelet accepts.
func TestExtraArgsRefuseManagedFlagsAsKubeletReadsThem_Issue24Item3(t *testing.T) {
	for arg, want := range map[string]string{
		"--root_dir=/x":         `"--root_dir=/x" sets --root-dir, which numa-partition sets for each partition (set kubelet.root_dir instead;`,
		"--hostname_override=n": `sets --hostname-override, which numa-partition sets for each partition (set kubelet.node_name instead;`,
		"--node_labels=a=b":     `sets --node-labels,`,
		"--container-runtime-endpoint=unix:///run/containerd-node1/containerd.sock": `sets --container-runtime-endpoint, which numa-partition sets for each partition (set runtime.endpoint instead;`,
		"--image_service_endpoint=unix:///run/x.sock":                               `sets --image-service-endpoint,`,
		"--config-dir=/etc/kubernetes/kubelet.conf.d":                               `sets --config-dir, which numa-partition sets for each partition (set kubelet.drop_in instead;`,
		"--max-pods=500":        `(set kubelet.max_pods instead;`,
		"--reserved-cpus=0":     `(set host.reserved_cpus instead;`,
		"--cgroup_root=/":       `sets --cgroup-root,`,
		"--anonymous-auth=true": `sets --anonymous-auth,`,
		"--port=10250":          `sets --port,`,
		"--root-dir":            `"--root-dir" has no value (write "--flag=value", or "--flag=true" for a switch)`,
		"--cluster-domain":      `"--cluster-domain" has no value`,
		"/var/lib/other":        `"/var/lib/other" is not a flag (write "--flag=value")`,
		"---root-dir=/x":        `"---root-dir=/x" is not a flag`,
		"--=x":                  `"--=x" is not a flag`,
	} {
		got := planErr(t, seedSpec, fmt.Sprintf("[kubelet]\nextra_args = [%q]", arg))
		assert.Contains(t, got, fmt.Sprintf(`config.toml:2: key "kubelet.extra_args": %q `, arg), arg)
		assert.Contains(t, got, want, arg)
	}
	// The two-argument form: both halves are refused, the flag by name.
	got := planErr(t, seedSpec, "[[partition]]\nnodes = [1]\nextra_args = [\"--hostname-override\", \"other\"]")
	assert.Equal(t, `config.toml:3: key "partition[0].extra_args": "--hostname-override" has no value (write "--flag=value", or "--flag=true" for a switch)`+"\n"+
		`config.toml:3: key "partition[0].extra_args": "other" is not a flag (write "--flag=value")`, got)
	// What kubelet reads as another flag is allowed.
	p := mustPlan(t, seedSpec, "[kubelet]\nextra_args = [\"--v=2\", \"--feature-gates=A=true,B=false\", \"--image-gc-high-threshold=90\"]")
	assert.Equal(t, []string{"--v=2", "--feature-gates=A=true,B=false", "--image-gc-high-threshold=90"}, p.Partitions[0].Kubelet.ExtraArgs)
}

// Issue 24 item 5: labels = {"numa-partition.io/partition" = "node2"}
// gave every Node partition=node2, silently. The tool's own label keys
// (its numa-partition.io/ namespace and numa-type) and taint keys in its
// namespace are refused, naming the key.
func TestConfigRefusesTheToolsOwnLabelAndTaintKeys_Issue24Item5(t *testing.T) {
	got := planErr(t, seedSpec, "[kubelet]\nlabels = { \"numa-partition.io/partition\" = \"node2\", \"numa-type\" = \"red\" }\ntaints = [\"numa-partition.io/x=y:NoSchedule\"]\n"+
		"[[partition]]\nnodes = [1]\nlabels = { \"numa-partition.io/other\" = \"a\" }\n")
	assert.Equal(t, `config.toml:2: key "kubelet.labels.numa-partition.io/partition": label key "numa-partition.io/partition" is in numa-partition's own namespace numa-partition.io/ (it labels every Node numa-partition.io/partition=<name>); choose another key`+"\n"+
		`config.toml:2: key "kubelet.labels.numa-type": label key "numa-type" is numa-partition's own (it labels every Node numa-type=<colour>, which pods select); choose another key`+"\n"+
		`config.toml:3: key "kubelet.taints": taint "numa-partition.io/x=y:NoSchedule": taint key "numa-partition.io/x" is in numa-partition's own namespace numa-partition.io/ (it labels every Node numa-partition.io/partition=<name>); choose another key`+"\n"+
		`config.toml:6: key "partition[0].labels.numa-partition.io/other": label key "numa-partition.io/other" is in numa-partition's own namespace numa-partition.io/ (it labels every Node numa-partition.io/partition=<name>); choose another key`, got)
	// Other namespaces under the domain, and a numa-type taint, are the user's.
	p := mustPlan(t, seedSpec, "[kubelet]\nlabels = { \"e2e.numa-partition.io/boot\" = \"1\" }\ntaints = [\"numa-type=gpu:NoSchedule\"]")
	assert.Equal(t, "1", p.Partitions[0].Labels["e2e.numa-partition.io/boot"])
	assert.Equal(t, "node0", p.Partitions[0].Labels[LabelPartition])
}

// Issue 24 item 13: max_pods = 9223372036854775807 was planned, and
// kubelet's maxPods is an int32; port bases past 65535 were only caught
// after the arithmetic, where a huge base wraps around. Integers are
// checked against the field they end in, before any arithmetic.
func TestIntegersCheckedAgainstTheirField_Issue24Item13(t *testing.T) {
	for _, c := range []struct{ config, want string }{
		{"[kubelet]\nmax_pods = 9223372036854775807", `config.toml:2: key "kubelet.max_pods": 9223372036854775807: allowed are 1-2147483647 (kubelet's maxPods is a 32-bit integer)`},
		{"[[partition]]\nnodes = [1]\nmax_pods = 2147483648", `config.toml:3: key "partition[0].max_pods": 2147483648: allowed are 1-2147483647 (kubelet's maxPods is a 32-bit integer)`},
		{"[kubelet]\nport = 9223372036854775807", `config.toml:2: key "kubelet.port": 9223372036854775807: allowed are 1-65535`},
		{"[kubelet]\nhealthz_port = 0", `config.toml:2: key "kubelet.healthz_port": 0: allowed are 1-65535`},
		{"[kubelet]\nread_only_port = -1", `config.toml:2: key "kubelet.read_only_port": -1: allowed are 0-65535`},
		{"[kubelet]\nport_stride = 9223372036854775807", `config.toml:2: key "kubelet.port_stride": 9223372036854775807: allowed are 0-65535`},
		{"[allocator]\nmetrics_port = 65536", `config.toml:2: key "allocator.metrics_port": 65536: allowed are 0-65535`},
	} {
		assert.Equal(t, c.want, planErr(t, seedSpec, c.config), c.config)
	}
	p := mustPlan(t, seedSpec, "[kubelet]\nmax_pods = 2147483647")
	assert.Equal(t, 2147483647, p.Partitions[0].Kubelet.MaxPods)
}

// Issue 24 item 16: {root_dir} in pod_logs_dir was "unknown placeholders
// {root_dir} (allowed: …, {root_dir})": the templates before root_dir in
// the code were expanded without it. Every template but root_dir's own
// may name it, and root_dir's message does not offer it.
func TestRootDirPlaceholderEverywhereButItself_Issue24Item16(t *testing.T) {
	p := mustPlan(t, seedSpec, "[kubelet]\npod_logs_dir = \"{root_dir}/logs\"\nconfig_path = \"{root_dir}/config.yaml\"")
	assert.Equal(t, "/var/lib/kubelet-node0/logs", p.Partitions[0].Kubelet.PodLogsDir)
	assert.Equal(t, "/var/lib/kubelet-node1/config.yaml", p.Partitions[1].Kubelet.ConfigPath)
	assert.Contains(t, planErr(t, seedSpec, "[kubelet]\nroot_dir = \"{root_dir}/x\""),
		`config.toml:2: key "kubelet.root_dir": "{root_dir}/x" uses unknown placeholders {root_dir} (allowed: {partition}, {index}, {hostname})`+"\n")
}

// Issue 38 item 8: kubelet flags outside the managed list that stop or
// hijack a kubelet planned, rendered and applied: --register-node=false
// kept the Node out, --lock-file made the kubelets wait for each other,
// --provider-id and --manifest-url made every partition claim one cloud
// instance or run a URL's pods, --version=true restarted it forever.
// Each is refused, in every spelling kubelet reads, with file, line and
// key and why.
func TestExtraArgsRefuseFlagsThatStopOrHijackAKubelet_Issue38Item8(t *testing.T) {
	for arg, want := range map[string]string{
		"--register-node=false":         `sets --register-node, which no partition's kubelet may have: the partition's Node must register`,
		"--register_node=true":          `sets --register-node,`,
		"--lock-file=/run/kubelet.lock": `sets --lock-file, which no partition's kubelet may have: every partition's kubelet would wait for`,
		"--provider-id=aws:///i-1":      `sets --provider-id, which no partition's kubelet may have`,
		"--manifest-url=http://x/pods":  `sets --manifest-url, which no partition's kubelet may have`,
		"--version=true":                `sets --version, which no partition's kubelet may have: it prints the version and exits, so the unit restarts forever`,
	} {
		got := planErr(t, seedSpec, fmt.Sprintf("[kubelet]\nextra_args = [%q]", arg))
		assert.Contains(t, got, fmt.Sprintf(`config.toml:2: key "kubelet.extra_args": %q `, arg), arg)
		assert.Contains(t, got, want, arg)
	}
}

// Issue 38 item 6: 40 arguments of 4,000 characters (161 KB) planned,
// rendered and applied, and kubelet restarted forever on "Argument list
// too long" (its command line is one /bin/sh -c word, at most 128 KiB).
// The arguments together are bounded at plan time, with the key's line.
func TestExtraArgsTogetherFitACommandLine_Issue38Item6(t *testing.T) {
	arg := fmt.Sprintf("%q", "--v="+strings.Repeat("4", 3996))
	args := strings.Repeat(arg+",", 39) + arg
	got := planErr(t, seedSpec, "[kubelet]\nextra_args = ["+args+"]")
	assert.Equal(t, `config.toml:2: key "kubelet.extra_args": holds 160040 bytes of arguments, more than 65536 (64 KiB): the kernel refuses a kubelet command line of more than 128 KiB and kubelet would never start`, got)
	// 16 such arguments fit.
	args = strings.Repeat(arg+",", 15) + arg
	mustPlan(t, seedSpec, "[kubelet]\nextra_args = ["+args+"]")
}

// Issue 38 item 8: count = -1 wrapped to 18446744073709551615 and the
// error spoke of that many pages. The count's range is checked before
// any conversion, at its own line and key; a count whose pages overflow
// 64 bits on two entries of one node is reported, not wrapped small.
func TestHugepageCountIsCheckedBeforeConversion_Issue38Item8(t *testing.T) {
	got := planErr(t, seedSpec, "[[host.hugepages]]\nsize = \"2Mi\"\ncount = -1\n")
	assert.Equal(t, `config.toml:3: key "host.hugepages[0].count": -1 is not a number of pages (allowed: 0 or more)`, got)
	got = planErr(t, seedSpec, "[[host.hugepages]]\nsize = \"2Mi\"\ncount = 9223372036854775807\nnodes = [0]\n"+
		"[[host.hugepages]]\nsize = \"1Gi\"\ncount = 9223372036854775807\nnodes = [0]\n")
	assert.Contains(t, got, "= more than 16Ei plus 1100Mi reserved exceed its memory 16Gi")
	assert.NotContains(t, got, "= 18446744073709551615")
}
