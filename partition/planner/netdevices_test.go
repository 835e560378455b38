package planner

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// nicFacts are the host of the synthetic-2node-nics fixture: eno1 holds
// the host's address and default route (eno2 is a port of bond0, which
// sysfs says), and a re-plan while the partitions run finds the VF
// 0000:86:00.3 as ens7f0v1 in node1's namespace, where sysfs read in the
// host's does not show it.
var nicFacts = FixedFacts{Root: ExampleFacts.Root, Tasks: ExampleFacts.Tasks, NetInterfaces: []Interface{
	{Name: "lo", Addresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}},
	{Name: "eno1", PCI: "0000:18:00.0", DefaultRoute: true, Addresses: []netip.Prefix{netip.MustParsePrefix("192.168.1.10/24")}},
	{Name: "enp0s31f6", PCI: "0000:00:1f.6"},
	{Name: "ens5f0", PCI: "0000:3b:00.0"},
	{Name: "ens7f0v1", PCI: "0000:86:00.3", Namespace: "np-node1"},
}}

func planNICs(t *testing.T, text string) (*Plan, error) {
	t.Helper()
	c, err := config.Parse("config.toml", []byte(text))
	require.NoError(t, err)
	c.Kubelet.Hostname = "h"
	return NewPlanFor(discoverFixture(t, "synthetic-2node-nics"), nicFacts, c)
}

func deviceNames(pn *PartitionNetwork) []string {
	var out []string
	for _, d := range pn.Devices {
		out = append(out, d.Name)
	}
	return out
}

func TestLocalDevicesByNUMALocality(t *testing.T) {
	p, err := planNICs(t, "[network]\nlocal_devices = true\n")
	require.NoError(t, err)
	// eno1 and eno2 carry the host's network; enp0s31f6 has no locality.
	assert.Equal(t, []string{"ens5f0", "ens5f1", "ens5f0v0", "ens5f0v1"}, deviceNames(p.Partitions[0].Network))
	// ens7f0v1 is in node1's namespace already (the facts say; sysfs
	// does not show it): the plan is the same as before the first apply.
	assert.Equal(t, []string{"ens7f0", "ens7f1", "ens7f0v0", "ens7f0v1"}, deviceNames(p.Partitions[1].Network))
	assert.Equal(t, NetDevice{Name: "ens5f0v1", PCI: "0000:3b:02.1", PhysFn: "0000:3b:00.0", Node: 0}, p.Partitions[0].Network.Devices[3])
	joined := strings.Join(p.Warnings, "\n")
	assert.Contains(t, joined, "network.local_devices: eno1 (0000:18:00.0, NUMA node 0) stays in the host's namespace: the host's default route leaves by it")
	assert.Contains(t, joined, "network.local_devices: eno2 (0000:18:00.1, NUMA node 0) stays in the host's namespace: it is a port of bond0, which it would leave")
}

// At boot the uplink may have no address yet: network.host_devices keeps
// it whatever the host shows.
func TestHostDevicesStayWithTheHost(t *testing.T) {
	p, err := planNICs(t, "[network]\nlocal_devices = true\nhost_devices = [\"ens5f0\", \"0000:86:00.1\"]\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"ens5f1", "ens5f0v0", "ens5f0v1"}, deviceNames(p.Partitions[0].Network))
	assert.Equal(t, []string{"ens7f0", "ens7f0v0", "ens7f0v1"}, deviceNames(p.Partitions[1].Network))
	assert.Contains(t, strings.Join(p.Warnings, "\n"), "network.local_devices: ens5f0 (0000:3b:00.0, NUMA node 0) stays in the host's namespace: network.host_devices keeps it")
}

func TestLocalDevicesListedPerPartition(t *testing.T) {
	p, err := planNICs(t, `
[[partition]]
nodes = [0]
local_devices = ["ens5f1", "0000:3b:02.0", "enp0s31f6"]
[[partition]]
nodes = [1]
local_devices = ["0000:86:00.0"]
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"enp0s31f6", "ens5f1", "ens5f0v0"}, deviceNames(p.Partitions[0].Network))
	assert.Equal(t, []string{"ens7f0"}, deviceNames(p.Partitions[1].Network))
	assert.Contains(t, strings.Join(p.Warnings, "\n"), "partition[0].local_devices: enp0s31f6 (0000:00:1f.6) has no NUMA locality (numa_node -1): moved into partition node0's namespace as listed")
}

func TestLocalDevicesErrors(t *testing.T) {
	for _, tc := range []struct{ name, config, want string }{
		{"unknown name", "[[partition]]\nnodes = [0]\nlocal_devices = [\"ens9\"]",
			`config.toml:3: key "partition[0].local_devices": "ens9": no network interface of a PCI function has this name; allowed are interface names and PCI addresses (0000:3b:00.1), the host's are enp0s31f6, eno1, eno2, ens5f0, ens5f1, ens5f0v0, ens5f0v1, ens7f0, ens7f1, ens7f0v0, ens7f0v1`},
		{"unknown PCI function", "[[partition]]\nnodes = [0]\nlocal_devices = [\"0000:3c:00.0\"]",
			`config.toml:3: key "partition[0].local_devices": "0000:3c:00.0": the host has no such PCI function`},
		{"PCI function without a netdev", "[[partition]]\nnodes = [1]\nlocal_devices = [\"0000:85:00.0\"]",
			`config.toml:3: key "partition[0].local_devices": "0000:85:00.0": this PCI function has no network interface (no netdev driver, or bound to vfio-pci): only network interfaces move into a namespace`},
		{"another partition's node", "[[partition]]\nnodes = [0]\nlocal_devices = [\"ens7f0\"]",
			`config.toml:3: key "partition[0].local_devices": "ens7f0" (0000:86:00.0) is on NUMA node 1, partition node1's: a partition's devices are on its own nodes 0`},
		{"two partitions", "[network]\nlocal_devices = true\n[[partition]]\nnodes = [0]\nlocal_devices = [\"enp0s31f6\"]\n[[partition]]\nnodes = [1]\nlocal_devices = [\"enp0s31f6\"]",
			`config.toml:8: key "partition[1].local_devices": "enp0s31f6" (0000:00:1f.6) is already partition node0's (partition[0].local_devices): a device can be in one namespace only`},
		{"the uplink", "[[partition]]\nnodes = [0]\nlocal_devices = [\"eno1\"]",
			`config.toml:3: key "partition[0].local_devices": "eno1" (0000:18:00.0) cannot leave the host's namespace: the host's default route leaves by it`},
		{"a bond's port", "[[partition]]\nnodes = [0]\nlocal_devices = [\"0000:18:00.1\"]",
			`config.toml:3: key "partition[0].local_devices": "eno2" (0000:18:00.1) cannot leave the host's namespace: it is a port of bond0, which it would leave`},
		{"the macvlan parent", "[network]\nuplink = \"macvlan\"\nparent = \"ens5f0\"\nsubnet = \"192.168.10.0/24\"\n[[partition]]\nnodes = [0]\nlocal_devices = [\"ens5f0\"]",
			`config.toml:7: key "partition[0].local_devices": "ens5f0" (0000:3b:00.0) cannot leave the host's namespace: it is network.parent, the NIC of the partitions' macvlans`},
		{"host_devices keeps it", "[network]\nhost_devices = [\"0000:3b:00.1\"]\n[[partition]]\nnodes = [0]\nlocal_devices = [\"ens5f1\"]",
			`config.toml:5: key "partition[0].local_devices": "ens5f1" (0000:3b:00.1) cannot leave the host's namespace: network.host_devices keeps it`},
		{"host_devices entry", "[network]\nhost_devices = [\"a/b\"]",
			`config.toml:2: key "network.host_devices": "a/b" is neither an interface name nor a PCI address (0000:3b:00.1)`},
		{"host mode", "[network]\nmode = \"host\"\nlocal_devices = true\n[[partition]]\nnodes = [0]\nlocal_devices = [\"ens5f1\"]",
			"config.toml:3: key \"network.local_devices\": needs network.mode = \"namespace\": in mode \"host\" there is no namespace to move them into\n" +
				`config.toml:6: key "partition[0].local_devices": needs network.mode = "namespace": in mode "host" there is no namespace to move them into`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planNICs(t, tc.config)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// Linux names interfaces with '$', '%' or quotes, which the namespace's
// oneshot cannot carry on its command line: such a device stays with the
// host, as a plan file cannot move it either (#39: render refused the
// plan the planner had made).
func TestLocalDeviceWithANameNoUnitCarries(t *testing.T) {
	topo := discoverFixture(t, "synthetic-2node-nics")
	renamed := false
	for i := range topo.PCI {
		for j := range topo.PCI[i].Net {
			if topo.PCI[i].Net[j].Name == "ens5f1" {
				topo.PCI[i].Net[j].Name, renamed = "ens5$f1", true
			}
		}
	}
	require.True(t, renamed, "the fixture has ens5f1")
	plan := func(text string) (*Plan, error) {
		c, err := config.Parse("config.toml", []byte(text))
		require.NoError(t, err)
		c.Kubelet.Hostname = "h"
		return NewPlanFor(topo, nicFacts, c)
	}
	p, err := plan("[network]\nlocal_devices = true\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"ens5f0", "ens5f0v0", "ens5f0v1"}, deviceNames(p.Partitions[0].Network))
	assert.Contains(t, strings.Join(p.Warnings, "\n"), "network.local_devices: ens5$f1 (0000:3b:00.1, NUMA node 0) stays in the host's namespace: its name has characters an interface name cannot have")
	_, err = plan("[[partition]]\nnodes = [0]\nlocal_devices = [\"0000:3b:00.1\"]\n")
	require.ErrorContains(t, err, `config.toml:3: key "partition[0].local_devices": "ens5$f1" (0000:3b:00.1) cannot leave the host's namespace: its name has characters an interface name cannot have ('/', ':', whitespace) or a unit cannot carry`)
}
