package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// runDiscover runs a command line as main does (runLine), quietly.
func runDiscover(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runLine(t, append([]string{"--log-level", "error"}, args...)...)
}

func fixtureSys(name string) string {
	return filepath.Join("..", "..", "testdata", "sysfs", name, "sys")
}

func TestDiscoverTree(t *testing.T) {
	out, err := runDiscover(t, "--sysfs", fixtureSys("hwloc-nvidiagpunumanodes"), "discover")
	require.NoError(t, err)
	for _, want := range []string{
		"machine: 2 sockets, 8 NUMA nodes, 8 cores, 32 online CPUs",
		"socket 8: 4 cores, CPUs 88-103, nodes 8",
		"  node 8 (cpu+memory): CPUs 88-103",
		"    cores: 4, SMT siblings 88-91 92-95 96-99 100-103",
		"    distances: 0:40 8:10 250:80 251:80 252:80 253:80 254:80 255:80",
		"    hugepages: 2Mi 0 total/0 free, 1Gi 0 total/0 free",
		"nodes without a socket:\n  node 250 (memory-only): CPUs none\n    memory: 15.0 GiB total",
		"warnings:\n  - devices/system/node/node0/cpulist says",
	} {
		assert.Contains(t, out, want)
	}
}

func TestDiscoverTreePCI(t *testing.T) {
	out, err := runDiscover(t, "--sysfs", fixtureSys("hwloc-40intel64-2g2n4c+pcilocality"), "discover")
	require.NoError(t, err)
	assert.Contains(t, out, "    PCI devices (1): class unknown 1\n")
	assert.Contains(t, out, "PCI: 37 devices, 36 without NUMA locality (numa_node -1)")
	assert.NotContains(t, out, "warnings:")
}

// TestDiscoverJSONSchema pins the documented fields of --output json.
func TestDiscoverJSONSchema(t *testing.T) {
	out, err := runDiscover(t, "--sysfs", fixtureSys("hwloc-offline-cpu0-node0"), "--output", "json", "discover")
	require.NoError(t, err)
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Sockets    []struct {
			ID    *int    `json:"id"`
			Nodes *string `json:"nodes"`
			CPUs  *string `json:"cpus"`
			Cores []struct {
				CoreID *int    `json:"coreId"`
				Socket *int    `json:"socket"`
				Node   *int    `json:"node"`
				CPUs   *string `json:"cpus"`
			} `json:"cores"`
		} `json:"sockets"`
		Nodes []struct {
			ID          *int    `json:"id"`
			Kind        *string `json:"kind"`
			CPUs        *string `json:"cpus"`
			MemoryBytes *uint64 `json:"memoryBytes"`
			FreeBytes   *uint64 `json:"freeBytes"`
			Hugepages   []struct {
				PageSize *uint64 `json:"pageSize"`
				Total    *uint64 `json:"total"`
				Free     *uint64 `json:"free"`
				Surplus  *uint64 `json:"surplus"`
			} `json:"hugepages"`
			Distances []int `json:"distances"`
		} `json:"nodes"`
		CPUs []struct {
			ID     *int  `json:"id"`
			Core   *int  `json:"core"`
			Socket *int  `json:"socket"`
			Node   *int  `json:"node"`
			Online *bool `json:"online"`
		} `json:"cpus"`
		PCI      []any    `json:"pciDevices"`
		Online   *string  `json:"online"`
		Offline  *string  `json:"offline"`
		Possible *string  `json:"possible"`
		Present  *string  `json:"present"`
		Warnings []string `json:"warnings"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&doc), out)
	assert.Equal(t, "numa-partition.io/v1alpha1", doc.APIVersion)
	assert.Equal(t, "Topology", doc.Kind)

	require.Len(t, doc.Sockets, 2)
	assert.Equal(t, 1, *doc.Sockets[1].ID)
	assert.Equal(t, "1", *doc.Sockets[1].Nodes)
	assert.Equal(t, "", *doc.Sockets[0].Nodes)
	require.Len(t, doc.Nodes, 1)
	n := doc.Nodes[0]
	assert.Equal(t, 1, *n.ID)
	assert.Equal(t, "cpu+memory", *n.Kind)
	assert.Equal(t, "5,7,9,11,13,15,17,19", *n.CPUs)
	assert.Equal(t, uint64(67108864*1024), *n.MemoryBytes)
	require.Len(t, n.Hugepages, 2)
	assert.Equal(t, uint64(2<<20), *n.Hugepages[0].PageSize)
	assert.NotNil(t, n.Hugepages[0].Total)
	assert.NotNil(t, n.Hugepages[0].Free)
	assert.Equal(t, []int{10}, n.Distances)
	require.Len(t, doc.CPUs, 24)
	assert.Equal(t, 0, *doc.CPUs[0].ID)
	assert.False(t, *doc.CPUs[0].Online)
	assert.Equal(t, -1, *doc.CPUs[0].Socket)
	assert.Equal(t, 1, *doc.CPUs[1].Node, "offline cpu1 is named by node1's cpulist")
	assert.True(t, *doc.CPUs[5].Online)
	assert.Equal(t, 2, *doc.CPUs[5].Core)
	assert.Equal(t, "4-20", *doc.Online)
	assert.NotNil(t, doc.PCI)
	assert.Len(t, doc.Warnings, 5)
}

func TestDiscoverErrors(t *testing.T) {
	_, err := runDiscover(t, "--sysfs", t.TempDir(), "discover")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a sysfs root")

	root := t.TempDir()
	path := filepath.Join(root, "devices", "system", "cpu")
	require.NoError(t, os.MkdirAll(filepath.Join(path, "cpu0"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "online"), []byte("0-x\n"), 0o644))
	_, err = runDiscover(t, "--sysfs", root, "discover")
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(path, "online")+`: invalid content "0-x"`)

	_, err = runDiscover(t, "--sysfs", fixtureSys("qemu-2node-v2"), "--output", "xml", "discover")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--output "xml": allowed are table, wide, json, yaml, jsonpath=TEMPLATE, jsonpath-file=FILE`)
}

// Global flags work after the command as kubectl users type them, and
// the one nearest the command wins; yaml is the json document as YAML.
func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	sys := fixtureSys("qemu-2node-v2")
	before, err := runDiscover(t, "--sysfs", sys, "--output", "json", "discover")
	require.NoError(t, err)
	after, err := runDiscover(t, "discover", "--sysfs", sys, "-o", "json")
	require.NoError(t, err)
	assert.Equal(t, before, after)
	nearest, err := runDiscover(t, "--sysfs", "/nonexistent", "-o", "table", "discover", "--sysfs", sys, "-o", "json")
	require.NoError(t, err)
	assert.Equal(t, before, nearest, "the flag after the command wins")

	y, err := runDiscover(t, "discover", "--sysfs", sys, "-o", "yaml")
	require.NoError(t, err)
	var fromYAML, fromJSON any
	require.NoError(t, yaml.Unmarshal([]byte(y), &fromYAML))
	require.NoError(t, json.Unmarshal([]byte(before), &fromJSON))
	assert.Equal(t, fromJSON, fromYAML)
}

// TestDiscoverDistanceMatrix: the matrix is numactl --hardware's, byte for
// byte (trailing blanks too), over every node directory.
func TestDiscoverDistanceMatrix(t *testing.T) {
	out, err := runDiscover(t, "--sysfs", fixtureSys("hwloc-nvidiagpunumanodes"), "discover")
	require.NoError(t, err)
	assert.Contains(t, out, "\nnode distances:\n"+
		"node   0   8  250  251  252  253  254  255 \n"+
		"  0:  10  40  80  80  80  80  80  80 \n"+
		"  8:  40  10  80  80  80  80  80  80 \n"+
		" 250:  80  80  10  80  80  80  80  80 \n"+
		" 251:  80  80  80  10  80  80  80  80 \n"+
		" 252:  80  80  80  80  10  80  80  80 \n"+
		" 253:  80  80  80  80  80  10  80  80 \n"+
		" 254:  80  80  80  80  80  80  10  80 \n"+
		" 255:  80  80  80  80  80  80  80  10 \n"+
		"warnings:\n")

	out, err = runDiscover(t, "--sysfs", fixtureSys("qemu-2node-v2"), "discover")
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(out, "\nnode distances:\nnode   0   1 \n  0:  10  20 \n  1:  20  10 \n"), "%s", out)
}

// TestDiscoverDistanceMatrixUnknown: numactl's message when no node has a
// distance file; "?" for one node's missing line.
func TestDiscoverDistanceMatrixUnknown(t *testing.T) {
	root := copyTree(t, fixtureSys("qemu-2node-v2"))
	node := filepath.Join(root, "devices", "system", "node")
	require.NoError(t, os.Remove(filepath.Join(node, "node1", "distance")))
	out, err := runDiscover(t, "--sysfs", root, "discover")
	require.NoError(t, err)
	assert.Contains(t, out, "node distances:\nnode   0   1 \n  0:  10  20 \n  1:   ?   ? \n")

	require.NoError(t, os.Remove(filepath.Join(node, "node0", "distance")))
	out, err = runDiscover(t, "--sysfs", root, "discover")
	require.NoError(t, err)
	assert.Contains(t, out, "\nNo distance information available.\n")
	assert.NotContains(t, out, "node distances:")
}

// TestDiscoverTreeCPUsInNoNode: online CPUs no node lists are named under
// their socket and for the machine.
func TestDiscoverTreeCPUsInNoNode(t *testing.T) {
	out, err := runDiscover(t, "--sysfs", fixtureSys("hwloc-offline-cpu0-node0"), "discover")
	require.NoError(t, err)
	assert.Contains(t, out, "socket 0: 9 cores, CPUs 4,6,8,10,12,14,16,18,20, nodes none\n  in no node: CPUs 4,6,8,10,12,14,16,18,20\nsocket 1:")
	assert.Contains(t, out, "\nonline CPUs in no node: 4,6,8,10,12,14,16,18,20\nnode distances:\n")
	assert.NotContains(t, out, "in no socket")

	out, err = runDiscover(t, "--sysfs", fixtureSys("qemu-2node-v2"), "discover")
	require.NoError(t, err)
	assert.NotContains(t, out, "in no node")

	// An online CPU without topology files is in its node but no socket.
	root := copyTree(t, fixtureSys("qemu-2node-v2"))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "devices", "system", "cpu", "cpu3", "topology")))
	out, err = runDiscover(t, "--sysfs", root, "discover")
	require.NoError(t, err)
	assert.Contains(t, out, "\nonline CPUs in no socket: 3\nnode distances:\n")
	assert.NotContains(t, out, "in no node")
}

// copyTree copies a sysfs dump so that a test can break it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

func TestVersionFlag(t *testing.T) {
	out, err := runDiscover(t, "--version")
	require.NoError(t, err)
	assert.Equal(t, "numa-partition version "+currentBuild().Version+"\n", out)
}
