package numa

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiscoverNetDevices reads each PCI function's network interfaces,
// the master an interface is a port of, and the physical function of an
// SR-IOV virtual function, from the fixture modelled on a dual-socket
// server with NICs on both nodes.
func TestDiscoverNetDevices(t *testing.T) {
	topo := discoverFixture(t, "synthetic-2node-nics")
	byAddr := map[string]PCIDevice{}
	for _, d := range topo.PCI {
		byAddr[d.Address] = d
	}
	for _, c := range []struct {
		addr, physfn string
		node         int
		net          []NetDevice
	}{
		{"0000:18:00.0", "", 0, []NetDevice{{Name: "eno1"}}},
		{"0000:18:00.1", "", 0, []NetDevice{{Name: "eno2", Master: "bond0"}}},
		{"0000:3b:00.0", "", 0, []NetDevice{{Name: "ens5f0"}}},
		{"0000:3b:02.1", "0000:3b:00.0", 0, []NetDevice{{Name: "ens5f0v1"}}},
		{"0000:86:00.2", "0000:86:00.0", 1, []NetDevice{{Name: "ens7f0v0"}}},
		{"0000:86:00.3", "0000:86:00.0", 1, nil}, // a VF bound to vfio-pci: no netdev
		{"0000:00:1f.6", "", -1, []NetDevice{{Name: "enp0s31f6"}}},
		{"0000:3a:00.0", "", 0, nil}, // the root port
	} {
		d, ok := byAddr[c.addr]
		require.True(t, ok, c.addr)
		assert.Equal(t, c.physfn, d.PhysFn, c.addr)
		assert.Equal(t, c.node, d.Node, c.addr)
		assert.Equal(t, c.net, d.Net, c.addr)
	}
	assert.Len(t, topo.PCI, 14) // 11 functions and 3 root ports
}

// A physfn link that names no PCI function is an error naming the file.
func TestDiscoverBadPhysfn(t *testing.T) {
	root := writeTree(t, twoNodes())
	vf := filepath.Join(root, "devices/pci0000:00/0000:00:02.0/0000:3b:02.0")
	require.NoError(t, os.MkdirAll(vf, 0o755))
	require.NoError(t, os.Symlink("../nothing", filepath.Join(vf, "physfn")))
	_, err := NewFS(root).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "0000:3b:02.0/physfn")
}
