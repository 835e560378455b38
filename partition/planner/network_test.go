package planner

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNetworkDefaultsToANamespacePerPartitionOnABridge(t *testing.T) {
	p := mustPlan(t, seedSpec, "")
	assert.Equal(t, Network{Mode: NetworkNamespace, Uplink: UplinkBridge, Bridge: "npbr0",
		Subnet: netip.MustParsePrefix("10.212.0.0/24"), HostAddress: netip.MustParsePrefix("10.212.0.1/24"),
		NAT: true, ResolvConf: "/etc/resolv.conf"}, p.Network)
	for i, want := range []string{"10.212.0.2/24", "10.212.0.3/24"} {
		n := p.Partitions[i].Network
		require.NotNil(t, n)
		assert.Equal(t, PartitionNetwork{Namespace: "np-node" + string(rune('0'+i)), HostLink: "np-node" + string(rune('0'+i)),
			Interface: "eth0", Address: netip.MustParsePrefix(want), Gateway: netip.MustParseAddr("10.212.0.1")}, *n)
	}
}

func TestNetworkHostModeHasNoNamespaces(t *testing.T) {
	p := mustPlan(t, seedSpec, "[network]\nmode = \"host\"")
	assert.Equal(t, Network{Mode: NetworkHost}, p.Network)
	for _, part := range p.Partitions {
		assert.Nil(t, part.Network)
	}
	assert.Equal(t, 10260, p.Partitions[1].Kubelet.Port, "in one namespace the ports are strided")
}

func TestNetworkMacvlanWithPoolAndExplicitAddress(t *testing.T) {
	facts := FixedFacts{Root: ExampleFacts.Root, Tasks: ExampleFacts.Tasks, NetInterfaces: []Interface{
		{Name: "lo", Addresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}},
		{Name: "eth0", Addresses: []netip.Prefix{netip.MustParsePrefix("192.168.10.64/24")}},
	}}
	c := mustParse(t, `
[network]
uplink = "macvlan"
parent = "eth0"
subnet = "192.168.10.0/24"
gateway = "192.168.10.1"
pool = "192.168.10.64/30"
[[partition]]
nodes = [1]
address = "192.168.10.200"
`)
	c.Kubelet.Hostname = "h"
	p, err := NewPlanFor(synth(seedSpec), facts, c)
	require.NoError(t, err)
	assert.False(t, p.Network.NAT)
	assert.Equal(t, "eth0", p.Network.Parent)
	// .64 is the host's own, so the pool's first free address is .65.
	assert.Equal(t, "192.168.10.65/24", p.Partitions[0].Network.Address.String())
	assert.Equal(t, "192.168.10.200/24", p.Partitions[1].Network.Address.String())
	assert.Equal(t, "192.168.10.1", p.Partitions[1].Network.Gateway.String())
}

func TestHostLinkNamesFitTheKernel(t *testing.T) {
	assert.Equal(t, "np-node0", HostLinkOf("node0"))
	long := HostLinkOf("averyveryverylongpartitionname")
	assert.Len(t, long, 15)
	assert.NotEqual(t, long, HostLinkOf("averyveryverylongpartitionnam2"))
}

func TestNetworkValidationErrors(t *testing.T) {
	for _, tc := range []struct{ name, config, want string }{
		{"bad mode", "[network]\nmode = \"bridge\"",
			`config.toml:2: key "network.mode": "bridge": allowed are "namespace" (a network namespace and address per partition) and "host" (the host's, shared)`},
		{"bad uplink", "[network]\nuplink = \"ipvlan\"",
			`config.toml:2: key "network.uplink": "ipvlan": allowed are "bridge" (a veth per partition on a host bridge) and "macvlan" (a macvlan per partition on network.parent)`},
		{"host mode with namespace keys", "[network]\nmode = \"host\"\nsubnet = \"10.1.0.0/24\"",
			`config.toml:3: key "network.subnet": is set, but network.mode = "host" has no namespaces to connect; remove it or use mode = "namespace"`},
		{"address in host mode", "[network]\nmode = \"host\"\n[[partition]]\nnodes = [0]\naddress = \"10.0.0.5\"",
			`config.toml:5: key "partition[0].address": needs network.mode = "namespace" (in mode "host" every partition has the host's address)`},
		{"subnet with host bits", "[network]\nsubnet = \"10.212.0.1/24\"",
			`config.toml:2: key "network.subnet": "10.212.0.1/24" has host bits set: the network is "10.212.0.0/24"`},
		{"subnet not a network", "[network]\nsubnet = \"ten\"",
			`config.toml:2: key "network.subnet": "ten" is not a network like "10.212.0.0/24"`},
		{"IPv6 subnet", "[network]\nsubnet = \"fd00::/64\"",
			`config.toml:2: key "network.subnet": "fd00::/64": only IPv4 networks are supported`},
		{"pool too small", "[network]\nsubnet = \"10.212.0.0/30\"",
			`config.toml:2: key "network.subnet": 10.212.0.0/30 has no free address left for partitions node1 (2 partitions; the gateway, the host's addresses and the network and broadcast addresses are not handed out): use a larger one`},
		{"pool outside the subnet", "[network]\npool = \"10.9.0.0/28\"",
			`config.toml:2: key "network.pool": 10.9.0.0/28 is not inside network.subnet 10.212.0.0/24`},
		{"address collides with the gateway", "[[partition]]\nnodes = [1]\naddress = \"10.212.0.1\"",
			`config.toml:3: key "partition[0].address": 10.212.0.1 is already network.gateway`},
		{"two partitions, one address", "[[partition]]\nnodes = [0]\naddress = \"10.212.0.9\"\n[[partition]]\nnodes = [1]\naddress = \"10.212.0.9\"",
			`config.toml:6: key "partition[1].address": 10.212.0.9 is already the address of partition node0`},
		{"address outside the subnet", "[[partition]]\nnodes = [0]\naddress = \"10.9.9.9\"",
			`config.toml:3: key "partition[0].address": 10.9.9.9 is not a host address of network.subnet 10.212.0.0/24`},
		{"broadcast address", "[[partition]]\nnodes = [0]\naddress = \"10.212.0.255\"",
			`config.toml:3: key "partition[0].address": 10.212.0.255 is not a host address of network.subnet 10.212.0.0/24`},
		{"macvlan without parent", "[network]\nuplink = \"macvlan\"\nsubnet = \"192.168.1.0/24\"",
			`config.toml:1: key "network.parent": is required with uplink = "macvlan": the NIC whose network the partitions' addresses are on`},
		{"macvlan with nat", "[network]\nuplink = \"macvlan\"\nparent = \"eth0\"\nsubnet = \"192.168.1.0/24\"\nnat = true",
			`config.toml:5: key "network.nat": is for uplink = "bridge": macvlan addresses are on the NIC's own network`},
		{"bridge name too long", "[network]\nbridge = \"a-very-long-bridge\"",
			`config.toml:2: key "network.bridge": "a-very-long-bridge" must be 1-15 characters (the kernel's IFNAMSIZ)`},
		{"mtu", "[network]\nmtu = 20",
			`config.toml:2: key "network.mtu": 20: allowed are 0 (the uplink's) and 68-65535`},
		{"resolv.conf relative", "[network]\nresolv_conf = \"resolv.conf\"",
			`config.toml:2: key "network.resolv_conf": "resolv.conf" is not an absolute path`},
		{"gateway outside the subnet", "[network]\ngateway = \"10.1.1.1\"",
			`config.toml:2: key "network.gateway": 10.1.1.1 is not a host address of network.subnet 10.212.0.0/24`},
		{"shared runtime", "[runtime]\nmode = \"shared\"\nendpoint = \"unix:///run/containerd/containerd.sock\"",
			`config.toml:2: key "runtime.mode": "shared": network.mode = "namespace" needs each partition's own containerd, which runs in the partition's namespace (or set network.mode = "host")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, planErr(t, seedSpec, tc.config))
		})
	}
}

func TestNetworkChecksAgainstTheHostsInterfaces(t *testing.T) {
	facts := FixedFacts{Root: ExampleFacts.Root, Tasks: ExampleFacts.Tasks, NetInterfaces: []Interface{
		{Name: "eth0", Addresses: []netip.Prefix{netip.MustParsePrefix("10.212.5.5/16")}},
	}}
	for _, tc := range []struct{ name, config, want string }{
		{"bridge subnet the host routes elsewhere", "",
			`config.toml: key "network.subnet": 10.212.0.0/24 overlaps 10.212.5.5/16 of the host's interface eth0: the bridge's network must be one the host does not route elsewhere`},
		{"a parent NIC the host does not have", "[network]\nuplink = \"macvlan\"\nparent = \"eth9\"\nsubnet = \"10.212.0.0/16\"",
			`config.toml:3: key "network.parent": "eth9": the host has no such interface (it has eth0)`},
		{"an address the host has", "[network]\nuplink = \"macvlan\"\nparent = \"eth0\"\nsubnet = \"10.212.0.0/16\"\n[[partition]]\nnodes = [0]\naddress = \"10.212.5.5\"",
			`config.toml:7: key "partition[0].address": 10.212.5.5 is already the host's interface eth0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, tc.config)
			c.Kubelet.Hostname = "h"
			_, err := NewPlanFor(synth(seedSpec), facts, c)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}
