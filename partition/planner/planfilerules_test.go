package planner

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// TestPlanFileRefusesWhatRenderTrusts: render and kubeletgen check no rule
// of a plan (#39), so a plan file breaking one is refused where it
// enters, by ParsePlan, with the plan file's key and what is allowed.
// Each case edits the seed machine's plan as planned, writes it as a plan
// file and reads it back.
func TestPlanFileRefusesWhatRenderTrusts(t *testing.T) {
	c, err := config.Parse("config.toml", []byte("[kubelet]\nhostname = \"h\"\n"))
	require.NoError(t, err)
	planned, err := NewPlan(synth(seedSpec), c)
	require.NoError(t, err)
	base, err := json.Marshal(planned)
	require.NoError(t, err)
	_, err = ParsePlan("plan.json", base)
	require.NoError(t, err, "the plan as planned is a plan file")
	for _, tt := range []struct {
		name string
		edit func(p *Plan)
		want []string // each in the error: the key, the value, what is allowed
	}{
		{"no partitions", func(p *Plan) { p.Partitions = nil }, []string{"the plan has no partitions"}},
		{"no host CPUs", func(p *Plan) { p.Host.ReservedCPUs = bitmask.CPUSet{} },
			[]string{"host.reservedCPUs is empty", "allowed: a CPU list of one CPU or more"}},
		{"no host memory node", func(p *Plan) { p.Host.MemoryNodes = bitmask.NodeSet{} },
			[]string{"host.memoryNodes is empty", "allowed: a list of one NUMA node with memory or more"}},
		{"unknown runtime kind", func(p *Plan) { p.Partitions[0].Runtime.Kind = "crio" },
			[]string{`partition node0: runtime.kind "crio": allowed are "containerd" (the partition's own containerd) and "shared"`}},
		{"quote in the sandbox image", func(p *Plan) { p.Partitions[0].Runtime.SandboxImage = `pause"` + "\n[x]" },
			[]string{`partition node0: runtime.sandboxImage "pause\"\n[x]" is not an image reference`, "(form: [registry/]name[:tag][@sha256:digest], lowercase name)"}},
		{"another NRI socket", func(p *Plan) { p.Partitions[1].Allocator.NRISocket = "/run/containerd-node1/other.sock" },
			[]string{`partition node1: allocator.nriSocket "/run/containerd-node1/other.sock" is not its containerd's NRI socket (allowed: /run/containerd-node1/nri.sock, in runtime.stateDir)`}},
		// kubeletgen takes the storage share's figures as they are.
		{"eviction not kubelet's", func(p *Plan) {
			p.Partitions[0].EphemeralStorage = &StorageShare{Filesystem: Filesystem{Path: "/", CapacityBytes: 1000}, EvictionBytes: 50, ShareBytes: 500, SystemReservedBytes: 450}
		}, []string{"partition node0: ephemeralStorage.evictionBytes 50 must be 100, kubelet's 10% nodefs.available of capacityBytes 1000"}},
		{"share beyond the filesystem", func(p *Plan) {
			p.Partitions[0].EphemeralStorage = &StorageShare{Filesystem: Filesystem{Path: "/", CapacityBytes: 1000}, EvictionBytes: 100, ShareBytes: 950, SystemReservedBytes: 0}
		}, []string{"partition node0: ephemeralStorage.shareBytes 950 and systemReservedBytes 0 must add up to capacityBytes 1000 less evictionBytes 100"}},
		// Kubelet's command line: each argument one a unit carries
		// unquoted, by the planner's rule for each value.
		{"space in a label", func(p *Plan) { p.Partitions[0].Labels["x"] = "a b" },
			[]string{`partition node0: labels: label "x" value "a b": a valid label must be an empty string or consist of alphanumeric characters`}},
		{"labels longer than an argument", func(p *Plan) {
			for i := range 200 {
				p.Partitions[0].Labels[fmt.Sprintf("k%03d", i)] = strings.Repeat("v", 20)
			}
		}, []string{"partition node0: labels: partition node0 has 203 labels, which make kubelet's --node-labels argument", "more than 4096; use fewer or shorter labels"}},
		{"node name no Node may have", func(p *Plan) { p.Partitions[1].NodeName = "H_1" },
			[]string{`partition node1: nodeName "H_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`}},
		{"specifier in extra args", func(p *Plan) { p.Partitions[1].Kubelet.ExtraArgs = []string{"--v=%i"} },
			[]string{`partition node1: kubelet.extraArgs: argument "--v=%i" has characters a unit's command line cannot carry unquoted; allowed are letters, digits`}},
		// Issue 24 item 3: kubelet normalises flags, the planner's rule too.
		{"managed flag with underscores in extra args", func(p *Plan) { p.Partitions[1].Kubelet.ExtraArgs = []string{"--root_dir=/x"} },
			[]string{`partition node1: kubelet.extraArgs: "--root_dir=/x" sets --root-dir, which numa-partition sets for each partition (set kubelet.root_dir instead`}},
		{"runtime endpoint in extra args", func(p *Plan) {
			p.Partitions[1].Kubelet.ExtraArgs = []string{"--container-runtime-endpoint=unix:///run/containerd-node0/containerd.sock"}
		}, []string{`kubelet.extraArgs: "--container-runtime-endpoint=unix:///run/containerd-node0/containerd.sock" sets --container-runtime-endpoint`}},
		{"path too long behind its flag", func(p *Plan) { p.Partitions[0].Kubelet.Kubeconfig = "/etc/kubernetes/" + strings.Repeat("k", 4020) },
			[]string{`key "kubelet.kubeconfig": "/etc/kubernetes/kkk`, "is 4036 bytes long, more than 4032"}},
		// The network oneshots' command lines and comments.
		{"slash in a namespace", func(p *Plan) { p.Partitions[0].Network.Namespace = "np/x" },
			[]string{`partition node0: network.namespace "np/x" has characters a namespace name cannot have ('/', ':', whitespace) or a unit cannot carry`}},
		{"host link longer than IFNAMSIZ", func(p *Plan) { p.Partitions[0].Network.HostLink = "np-" + strings.Repeat("x", 13) },
			[]string{`partition node0: network.hostLink "np-xxxxxxxxxxxxx" must be 1-15 characters (the kernel's IFNAMSIZ)`}},
		{"specifier in the interface", func(p *Plan) { p.Partitions[1].Network.Interface = "eth%i" },
			[]string{`partition node1: network.interface "eth%i" has characters an interface name cannot have`}},
		{"IPv6 address", func(p *Plan) { p.Partitions[0].Network.Address = netip.MustParsePrefix("fd00::2/64") },
			[]string{`partition node0: network.address "fd00::2/64": allowed is an IPv4 address with its network's length (10.212.0.2/24)`}},
		{"device named with a '$'", func(p *Plan) { p.Partitions[0].Network.Devices = []NetDevice{{Name: "eth$1", PCI: "0000:3b:00.1"}} },
			[]string{`partition node0: network.devices name "eth$1" has characters an interface name cannot have`}},
		{"newline in a device's PCI address", func(p *Plan) {
			p.Partitions[0].Network.Devices = []NetDevice{{Name: "eth1", PCI: "0000:3b:00.1\nExecStartPre=/bin/x"}}
		}, []string{`partition node0: network.devices eth1: pci "0000:3b:00.1\nExecStartPre=/bin/x", physfn "": allowed are PCI function addresses (0000:3b:00.1; physfn may be empty)`}},
		{"space in the bridge", func(p *Plan) { p.Network.Bridge = "br 0" },
			[]string{`network.bridge "br 0" has characters an interface name cannot have`}},
		{"bridge without a host address", func(p *Plan) { p.Network.HostAddress = netip.Prefix{} },
			[]string{`network.hostAddress "invalid Prefix": allowed is an IPv4 address with its network's length`}},
		{"NAT without a subnet", func(p *Plan) { p.Network.Subnet = netip.Prefix{} },
			[]string{`network.subnet "invalid Prefix": allowed is an IPv4 address with its network's length`}},
		{"macvlan without a parent", func(p *Plan) { p.Network.Uplink = UplinkMacvlan },
			[]string{`network.parent "" must be 1-15 characters (the kernel's IFNAMSIZ)`}},
		{"unknown uplink", func(p *Plan) { p.Network.Uplink = "vxlan" },
			[]string{`network.uplink "vxlan": allowed are "bridge" (a veth per partition on a host bridge) and "macvlan" (a macvlan per partition on network.parent)`}},
		{"MTU below IPv4's", func(p *Plan) { p.Network.MTU = 40 }, []string{`network.mtu 40: allowed are 0 (the uplink's) and 68-65535`}},
		{"a partition without its namespace", func(p *Plan) { p.Partitions[1].Network = nil },
			[]string{`partition node1 has no network, but network.mode is "namespace" (allowed: a network for every partition, or network.mode "host")`}},
		{"a namespace in host mode", func(p *Plan) { p.Network = Network{Mode: NetworkHost} },
			[]string{`partition node0: a network is planned, but network.mode is "host" (allowed: a partition's own network with network.mode "namespace" only)`}},
		// The hugepages oneshot's pools, each set once.
		{"a page size twice on a node", func(p *Plan) {
			p.Partitions[0].Memory[0].Hugepages = []HugepagePlan{{PageSize: 2 << 20, Count: 8}, {PageSize: 2 << 20, Count: 4}}
		}, []string{"partition node0: memory of node 0: hugepages of 2Mi are planned twice (allowed: one entry per node and page size)"}},
		{"a node's pool in two partitions", func(p *Plan) {
			p.Partitions[0].Memory[0].Hugepages = []HugepagePlan{{PageSize: 2 << 20, Count: 8}}
			p.Partitions[1].Memory = append(p.Partitions[1].Memory, NodeMemory{Node: 0, Hugepages: []HugepagePlan{{PageSize: 2 << 20, Count: 8}}})
		}, []string{"partition node1: memory of node 0: hugepages of 2Mi are planned twice (allowed: one entry per node and page size)"}},
		// Issue 24: render checked a plan file's node dirs with rules of
		// its own, which let through a node dir the planner refuses; the
		// planner's (checkNodeDirs, through CheckPaths) hold them.
		{"node dir over the kubelet directory", withNodeDirs(NodeDir{Path: "/var/lib/kubelet", Source: "/var/lib/kubelet-node0"}),
			[]string{`key "network.node_dirs": "/var/lib/kubelet" is or holds /var/lib/kubelet, which belongs to the system, to numa-partition or (/var/lib/kubelet) is every partition's own already`}},
		{"another partition's node dir source", withNodeDirs(NodeDir{Path: "/run/flannel", Source: "/run/flannel-node1"}),
			[]string{`"/run/flannel-node1" is not partition node0's directory for "/run/flannel", which is "/run/flannel-node0"`}},
		{"overlapping node dirs", withNodeDirs(NodeDir{Path: "/run/flannel", Source: "/run/flannel-node0"}, NodeDir{Path: "/run/flannel/x", Source: "/run/flannel/x-node0"}),
			[]string{`"/run/flannel" and "/run/flannel/x" overlap: list each directory once, and none inside another`}},
		{"node dir in no tree systemd makes", withNodeDirs(NodeDir{Path: "/opt/cni", Source: "/opt/cni-node0"}),
			[]string{`key "network.node_dirs": "/opt/cni" is not below /etc, /run, /var/lib, /var/log, /var/cache, where systemd makes a partition's own copy before binding it`}},
		{"node dir source in another tree", withNodeDirs(NodeDir{Path: "/run/flannel", Source: "/var/lib/flannel-node0"}),
			[]string{`"/var/lib/flannel-node0" is not partition node0's directory for "/run/flannel"`}},
		// Issue 24 item 13: kubelet's maxPods is an int32, which
		// kubeletgen converts as it is.
		{"max pods beyond int32", func(p *Plan) { p.Partitions[0].Kubelet.MaxPods = 1 << 40 },
			[]string{"partition node0: kubelet.maxPods 1099511627776: allowed are 1-2147483647 (kubelet's maxPods is a 32-bit integer)"}},
		{"no pods", func(p *Plan) { p.Partitions[1].Kubelet.MaxPods = 0 },
			[]string{"partition node1: kubelet.maxPods 0: allowed are 1-2147483647"}},
		// Moved from render's tests, which fed render these plan files
		// before CheckPlanFile held them (names, paths, ports, labels).
		{"dash in name", rename(0, "node-0"), []string{`partition name "node-0"`}},
		{"underscore in name", rename(0, "node_0"), []string{`partition name "node_0"`}},
		{"same name twice", rename(1, "node0"), []string{"used twice"}},
		{"slice not name.slice", func(p *Plan) { p.Partitions[0].Slice = "other.slice" }, []string{`slice "other.slice" must be "node0.slice"`}},
		// Issue 27: a socket group with a newline was planned and rendered.
		{"newline in the socket group", func(p *Plan) { p.Partitions[0].Allocator.SocketGroup = "kube\nExecStartPre=/x" },
			[]string{`allocator.socketGroup "kube\nExecStartPre=/x" is not a group name or gid`}},
		{"another partition's NRI plugin", func(p *Plan) { p.Partitions[0].Allocator.NRIPlugin = "numa-partition-node1" },
			[]string{`allocator.nriPlugin "numa-partition-node1" must be "numa-partition-node0"`}},
		{"relative config path", func(p *Plan) { p.Partitions[0].Kubelet.ConfigPath = "kubelet.yaml" }, []string{`key "kubelet.config_path": "kubelet.yaml" is not an absolute path`}},
		// Issue 24 items 4, 8, 9: a plan read from a file is checked with
		// the planner's path, name and collision rules.
		{"colon in a root dir", func(p *Plan) { p.Partitions[0].Kubelet.RootDir = "/var/lib/kubelet:x" }, []string{`key "kubelet.root_dir": "/var/lib/kubelet:x" has characters`}},
		{"name starting with a digit", rename(0, "0"), []string{`partition name "0" is not a valid slice name part`}},
		{"kubeconfig is the kubelet config", func(p *Plan) { p.Partitions[0].Kubelet.Kubeconfig = p.Partitions[0].Kubelet.ConfigPath },
			[]string{`partition node0 gets /etc/numa-partition/kubelet-node0.yaml for both kubelet.config_path and kubelet.kubeconfig`}},
		{"allocator socket is containerd's", func(p *Plan) { p.Partitions[1].Allocator.Socket = "/run/containerd-node1/containerd.sock" },
			[]string{`for both runtime.endpoint and allocator.socket`}},
		// Issue 24 item 5: a plan file cannot relabel a Node as another
		// partition, nor use the tool's label namespace.
		{"another partition's label", func(p *Plan) { p.Partitions[0].Labels["numa-partition.io/partition"] = "node1" },
			[]string{`partition node0: label numa-partition.io/partition=node1; numa-partition sets it to "node0"`}},
		// Issue 36: the host label names the plan's host, not another.
		{"another host's label", func(p *Plan) { p.Partitions[1].Labels["numa-partition.io/host"] = "host2" },
			[]string{`partition node1: label numa-partition.io/host=host2; numa-partition sets it to "h"`}},
		{"own namespace taint", func(p *Plan) {
			p.Partitions[1].Taints = []Taint{{Key: "numa-partition.io/x", Effect: "NoSchedule"}}
		},
			[]string{`taint key "numa-partition.io/x" is in numa-partition's own namespace`}},
		{"tcp runtime endpoint", func(p *Plan) { p.Partitions[0].Runtime.Endpoint = "tcp://1.2.3.4:1" }, []string{"runtime.endpoint"}},
		{"device plugins at the shared path", func(p *Plan) {
			p.Partitions[0].Kubelet.DevicePluginsDir = "/var/lib/kubelet/device-plugins"
		}, []string{"shared path itself"}},
		{"socket outside /run", func(p *Plan) { p.Partitions[0].Allocator.Socket = "/tmp/a.sock" }, []string{`"/tmp/a.sock" is not in a directory below /run/`}},
		{"relative CNI dir", func(p *Plan) { p.Partitions[1].Runtime.CNIConfDir = "net.d" }, []string{`key "runtime.cni_conf_dir": "net.d" is not an absolute path`}},
		// Issue 27: render took a plan file's kubelet ports unchecked and
		// parsed its metrics address by rules of its own; it now checks
		// every port with the planner's rules (planner.CheckPorts).
		{"kubelet port past 65535", func(p *Plan) { p.Partitions[1].Kubelet.Port = 70000 },
			[]string{`key "kubelet.port": partition node1 gets port 70000, outside 1-65535`}},
		{"one port twice on the host", func(p *Plan) {
			p.Network = Network{Mode: NetworkHost}
			for i := range p.Partitions {
				p.Partitions[i].Network = nil
			}
			p.Partitions[1].Kubelet.Port = 10260
			p.Partitions[1].Kubelet.HealthzPort = p.Partitions[0].Kubelet.Port
		},
			[]string{`key "kubelet.healthz_port": healthz_port of partition node1 is 10250, already the port of partition node0 (key kubelet.port)`}},
		{"metrics port is a kubelet port", func(p *Plan) { p.Partitions[0].Allocator.MetricsPort = p.Partitions[0].Kubelet.HealthzPort },
			[]string{`key "allocator.metrics_port": metrics_port of partition node0 is 10248, already the healthz_port of partition node0`}},
		{"negative metrics port", func(p *Plan) { p.Partitions[0].Allocator.MetricsPort = -1 },
			[]string{`key "allocator.metrics_port": partition node0 gets port -1, outside 1-65535`}},
		{"etcd's port", func(p *Plan) { p.Partitions[0].Kubelet.Port = 2379 }, []string{`port of partition node0 is 2379, the port of etcd client`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p Plan
			require.NoError(t, json.Unmarshal(base, &p))
			tt.edit(&p)
			data, err := json.Marshal(&p)
			require.NoError(t, err)
			_, err = ParsePlan("plan.json", data)
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "plan.json: "), "the error names the file: %v", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// A machine whose nodes show no memory leaves the host none: the config
// is refused at host.memory_nodes, the rule a plan file's host is held to
// (hostProblem), not planned for render to refuse.
func TestHostWithoutMemoryNodeIsRefused(t *testing.T) {
	topo := synth(seedSpec)
	for i := range topo.Nodes {
		topo.Nodes[i].MemoryBytes, topo.Nodes[i].Kind = 0, numa.NodeCPUOnly
	}
	_, err := NewPlan(topo, mustParse(t, "[kubelet]\nhostname = \"h\"\n"))
	require.ErrorContains(t, err, `key "host.memory_nodes": finds no NUMA node with memory on this machine`)
}

// withNodeDirs gives partition node0 these node dirs alone.
func withNodeDirs(dirs ...NodeDir) func(*Plan) {
	return func(p *Plan) { p.Partitions[0].NodeDirs = dirs }
}

// rename names partition i name, its slice name.slice, and gives it no
// node dirs (their sources carry the old name, refused first).
func rename(i int, name string) func(*Plan) {
	return func(p *Plan) {
		p.Partitions[i].Name, p.Partitions[i].Slice, p.Partitions[i].NodeDirs = name, name+".slice", nil
	}
}
