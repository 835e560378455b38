package numa

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoNodes is a small, well-formed sysfs tree: 4 CPUs, 2 SMT cores, one
// socket, two nodes, with the trailing "\n\x00" some kernels write.
func twoNodes() map[string]string {
	return map[string]string{
		"devices/system/cpu/online":   "0-3\n",
		"devices/system/cpu/possible": "0-3\n",
		"devices/system/cpu/present":  "0-3\n",
		"devices/system/cpu/offline":  "\n",

		"devices/system/cpu/cpu0/topology/physical_package_id":  "0\n",
		"devices/system/cpu/cpu0/topology/core_id":              "0\n",
		"devices/system/cpu/cpu0/topology/thread_siblings_list": "0,2\n\x00",
		"devices/system/cpu/cpu1/topology/physical_package_id":  "0\n",
		"devices/system/cpu/cpu1/topology/core_id":              "1\n",
		"devices/system/cpu/cpu1/topology/thread_siblings_list": "1,3\n\x00",
		"devices/system/cpu/cpu2/topology/physical_package_id":  "0\n",
		"devices/system/cpu/cpu2/topology/core_id":              "0\n",
		"devices/system/cpu/cpu2/topology/thread_siblings_list": "0,2\n\x00",
		"devices/system/cpu/cpu3/topology/physical_package_id":  "0\n",
		"devices/system/cpu/cpu3/topology/core_id":              "1\n",
		"devices/system/cpu/cpu3/topology/thread_siblings_list": "1,3\n\x00",

		"devices/system/node/online":         "0-1\n",
		"devices/system/node/possible":       "0-1\n",
		"devices/system/node/has_cpu":        "0-1\n",
		"devices/system/node/has_memory":     "0-1\n",
		"devices/system/node/node0/cpulist":  "0,2\n\x00",
		"devices/system/node/node0/cpumap":   "1\n",
		"devices/system/node/node0/distance": "10 21\n",
		"devices/system/node/node0/meminfo":  "Node 0 MemTotal: 1024 kB\nNode 0 MemFree: 512 kB\nNode 0 HugePages_Total: 2\n",
		"devices/system/node/node1/cpulist":  "1,3\n",
		"devices/system/node/node1/distance": "21 10\n",
		"devices/system/node/node1/meminfo":  "\nNode 1 MemTotal: 2048 kB\nNode 1 MemFree: 1024 kB\n",

		"devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages":         "4\n",
		"devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages":       "3\n",
		"devices/system/node/node0/hugepages/hugepages-2048kB/surplus_hugepages":    "0\n",
		"devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages":      "1\n",
		"devices/system/node/node0/hugepages/hugepages-1048576kB/free_hugepages":    "1\n",
		"devices/system/node/node0/hugepages/hugepages-1048576kB/surplus_hugepages": "0\n",

		"devices/pci0000:00/0000:00:02.0/numa_node":              "1\n",
		"devices/pci0000:00/0000:00:02.0/class":                  "0x060400\n",
		"devices/pci0000:00/0000:00:02.0/0000:3b:00.0/numa_node": "1\n",
		"devices/pci0000:00/0000:00:02.0/0000:3b:00.0/class":     "0x020000\n",
		"devices/pci0000:00/0000:00:02.0/0000:3b:00.0/vendor":    "0x8086\n",
		"devices/pci0000:00/0000:00:02.0/0000:3b:00.0/device":    "0x1572\n",
	}
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		path := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return root
}

func with(base map[string]string, changes map[string]string) map[string]string {
	files := maps.Clone(base)
	for k, v := range changes {
		if v == "<absent>" {
			delete(files, k)
			continue
		}
		files[k] = v
	}
	return files
}

func TestDiscoverSmallTree(t *testing.T) {
	topo, err := NewFS(writeTree(t, twoNodes())).Discover()
	require.NoError(t, err)

	require.Len(t, topo.Nodes, 2)
	n0 := topo.Nodes[0]
	assert.Equal(t, "0,2", n0.CPUs.String())
	assert.Equal(t, NodeCPUAndMemory, n0.Kind)
	assert.Equal(t, uint64(1024*1024), n0.MemoryBytes)
	assert.Equal(t, uint64(512*1024), n0.FreeBytes)
	assert.Equal(t, []Hugepages{
		{PageSize: 2 << 20, Total: 4, Free: 3},
		{PageSize: 1 << 30, Total: 1, Free: 1},
	}, n0.Hugepages)
	assert.Equal(t, []Hugepages{}, topo.Nodes[1].Hugepages)
	d, ok := topo.Distance(1, 0)
	assert.True(t, ok)
	assert.Equal(t, 21, d)

	require.Len(t, topo.Sockets, 1)
	s := topo.Sockets[0]
	assert.Equal(t, "0-1", s.Nodes.String())
	require.Len(t, s.Cores, 2)
	assert.Equal(t, "0,2", s.Cores[0].CPUs.String())
	assert.Equal(t, 0, s.Cores[0].Node)
	assert.Equal(t, "1,3", s.Cores[1].CPUs.String())

	assert.Equal(t, []PCIDevice{
		{Address: "0000:00:02.0", Class: "0x060400", Node: 1},
		{Address: "0000:3b:00.0", Class: "0x020000", Vendor: "0x8086", Device: "0x1572", Node: 1},
	}, topo.PCI)
	assert.Equal(t, "network", PCIClassName(topo.PCI[1].Class))

	// node0's cpumap was edited: discovery says so and uses cpulist.
	require.Len(t, topo.Warnings, 1)
	assert.Contains(t, topo.Warnings[0], `node0/cpulist says "0,2" but cpumap says "0"`)
}

// TestDiscoverDegrades covers missing information: each case is filled in
// by a fixed rule and named in a warning, never guessed silently.
func TestDiscoverDegrades(t *testing.T) {
	noNodes := map[string]string{}
	for k := range twoNodes() {
		if strings.HasPrefix(k, "devices/system/node/") {
			noNodes[k] = "<absent>"
		}
	}
	cases := []struct {
		name    string
		changes map[string]string
		check   func(t *testing.T, topo *Topology)
		warning string
	}{
		{"no node directory", noNodes, func(t *testing.T, topo *Topology) {
			require.Len(t, topo.Nodes, 1)
			assert.Equal(t, 0, topo.Nodes[0].ID)
			assert.Equal(t, "0-3", topo.Nodes[0].CPUs.String())
			assert.Equal(t, []int{10}, topo.Nodes[0].Distances)
			for _, c := range topo.CPUs {
				assert.Equal(t, 0, c.Node)
			}
		}, "no nodeN directories"},
		{"memory-only node", map[string]string{
			"devices/system/node/node1/cpulist": "\n", "devices/system/node/has_cpu": "0\n",
			"devices/system/node/node0/cpulist": "0-3\n", "devices/system/node/node0/cpumap": "f\n",
		}, func(t *testing.T, topo *Topology) {
			assert.Equal(t, NodeMemoryOnly, topo.Nodes[1].Kind)
			assert.Equal(t, NodeCPUAndMemory, topo.Nodes[0].Kind)
		}, ""},
		{"empty node", map[string]string{
			"devices/system/node/node1/cpulist": "\n",
			"devices/system/node/node1/meminfo": "Node 1 MemTotal: 0 kB\nNode 1 MemFree: 0 kB\n",
		}, func(t *testing.T, topo *Topology) {
			assert.Equal(t, NodeEmpty, topo.Nodes[1].Kind)
		}, "online CPUs 1,3 are listed by no node"},
		{"cpu-only node", map[string]string{
			"devices/system/node/node1/meminfo": "<absent>",
		}, func(t *testing.T, topo *Topology) {
			assert.Equal(t, NodeCPUOnly, topo.Nodes[1].Kind)
		}, "node1: meminfo is missing"},
		{"has_cpu empty", map[string]string{"devices/system/node/has_cpu": "\n"}, nil, `has_cpu says "" but the nodes with online CPUs are "0-1"`},
		{"CPU listed by two nodes", map[string]string{"devices/system/node/node1/cpulist": "0-3\n"}, func(t *testing.T, topo *Topology) {
			assert.Equal(t, "0,2", topo.Nodes[0].CPUs.String())
			assert.Equal(t, "1,3", topo.Nodes[1].CPUs.String())
		}, "CPUs 0,2 are listed by several nodes (0-1)"},
		{"offline CPU without topology", map[string]string{
			"devices/system/cpu/online": "1-3\n", "devices/system/cpu/offline": "0\n",
			"devices/system/cpu/cpu0/topology/physical_package_id":  "<absent>",
			"devices/system/cpu/cpu0/topology/core_id":              "<absent>",
			"devices/system/cpu/cpu0/topology/thread_siblings_list": "<absent>",
			// An offline CPU keeps its directory, with its online file.
			"devices/system/cpu/cpu0/online": "0\n",
		}, func(t *testing.T, topo *Topology) {
			assert.Equal(t, CPU{ID: 0, Core: -1, Socket: -1, Node: 0, Online: false}, topo.CPUs[0])
			assert.Equal(t, "2", topo.Nodes[0].CPUs.String())
			require.Len(t, topo.Sockets[0].Cores, 2)
			assert.Equal(t, "1,3", topo.Sockets[0].Cores[0].CPUs.String())
			assert.Equal(t, "2", topo.Sockets[0].Cores[1].CPUs.String())
		}, ""},
		{"offline beyond possible", map[string]string{"devices/system/cpu/offline": "4-7\n"}, nil, "offline names CPUs 4-7 that are not possible"},
		{"no online, possible, present", map[string]string{
			"devices/system/cpu/online": "<absent>", "devices/system/cpu/possible": "<absent>",
			"devices/system/cpu/present": "<absent>", "devices/system/cpu/offline": "<absent>",
			"devices/system/cpu/cpu3/online": "0\n",
		}, func(t *testing.T, topo *Topology) {
			assert.Equal(t, "0-2", topo.Online.String())
			assert.Equal(t, "3", topo.Offline.String())
			assert.Equal(t, "0-3", topo.Present.String())
		}, "missing present"},
		{"no siblings files", map[string]string{
			"devices/system/cpu/cpu0/topology/thread_siblings_list": "<absent>",
			"devices/system/cpu/cpu1/topology/thread_siblings_list": "<absent>",
			"devices/system/cpu/cpu2/topology/thread_siblings_list": "<absent>",
			"devices/system/cpu/cpu3/topology/thread_siblings_list": "<absent>",
		}, func(t *testing.T, topo *Topology) {
			assert.Len(t, topo.Sockets[0].Cores, 2)
		}, "grouping CPUs into cores by (physical_package_id, core_id)"},
		{"siblings as masks only", map[string]string{
			"devices/system/cpu/cpu0/topology/thread_siblings_list": "<absent>",
			"devices/system/cpu/cpu0/topology/thread_siblings":      "5\n",
		}, func(t *testing.T, topo *Topology) {
			assert.Equal(t, "0,2", topo.Sockets[0].Cores[0].CPUs.String())
		}, ""},
		{"package -1", map[string]string{
			"devices/system/cpu/cpu0/topology/physical_package_id": "-1\n",
			"devices/system/cpu/cpu2/topology/physical_package_id": "-1\n",
		}, func(t *testing.T, topo *Topology) {
			require.Len(t, topo.Sockets, 2)
			assert.Equal(t, -1, topo.Sockets[0].ID)
			assert.Equal(t, "0,2", topo.Sockets[0].CPUs.String())
		}, "physical_package_id is -1"},
		{"distance line of the original machine", map[string]string{
			"devices/system/node/online":                                                "1\n",
			"devices/system/node/node0/cpulist":                                         "<absent>",
			"devices/system/node/node0/cpumap":                                          "<absent>",
			"devices/system/node/node0/distance":                                        "<absent>",
			"devices/system/node/node0/meminfo":                                         "<absent>",
			"devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages":         "<absent>",
			"devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages":       "<absent>",
			"devices/system/node/node0/hugepages/hugepages-2048kB/surplus_hugepages":    "<absent>",
			"devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages":      "<absent>",
			"devices/system/node/node0/hugepages/hugepages-1048576kB/free_hugepages":    "<absent>",
			"devices/system/node/node0/hugepages/hugepages-1048576kB/surplus_hugepages": "<absent>",
		}, func(t *testing.T, topo *Topology) {
			// node0 is offline: no directory, node1's line has 2 values.
			require.Len(t, topo.Nodes, 1)
			n1, ok := topo.Node(1)
			require.True(t, ok)
			d, ok := topo.Distance(1, 1)
			assert.True(t, ok)
			assert.Equal(t, 10, d)
			assert.Equal(t, "1,3", n1.CPUs.String())
			assert.Equal(t, []int{10}, n1.Distances)
		}, "reading them as distances to devices/system/node/possible (0-1)"},
		{"PCI device on a missing node", map[string]string{"devices/pci0000:00/0000:00:02.0/numa_node": "7\n"}, nil, "0000:00:02.0→7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := NewFS(writeTree(t, with(twoNodes(), tc.changes))).Discover()
			require.NoError(t, err)
			if tc.check != nil {
				tc.check(t, topo)
			}
			if tc.warning != "" {
				assert.Contains(t, strings.Join(topo.Warnings, "\n"), tc.warning)
			}
		})
	}
}

// TestDiscoverRejectsMalformed: every malformed file is an error naming
// the file and what it holds.
func TestDiscoverRejectsMalformed(t *testing.T) {
	cases := []struct {
		file, content, reason string
	}{
		{"devices/system/cpu/online", "0-3x\n", "not a decimal number"},
		{"devices/system/cpu/present", "3-0\n", "reversed"},
		{"devices/system/cpu/cpu1/topology/physical_package_id", "one\n", "not a decimal integer"},
		{"devices/system/cpu/cpu1/topology/core_id", "01\n", "not a decimal integer"},
		{"devices/system/cpu/cpu1/topology/thread_siblings_list", "3\n", "do not include cpu1"},
		{"devices/system/node/node0/cpulist", "0,,2\n", "empty element"},
		{"devices/system/node/node0/cpumap", "xyz\n", "not hexadecimal"},
		{"devices/system/node/node0/distance", "10 abc\n", `distance "abc"`},
		{"devices/system/node/node0/distance", "10 21 30\n", "3 values, but there are 2 nodes"},
		{"devices/system/node/node0/distance", "10 256\n", "out of range"},
		{"devices/system/node/node0/meminfo", "Node 1 MemTotal: 1024 kB\n", `start with "Node 0"`},
		{"devices/system/node/node0/meminfo", "Node 0 MemTotal: 1024 kB\n", "no MemFree line"},
		{"devices/system/node/node1/meminfo", "Node 1 MemTotal: 1 MB\nNode 1 MemFree: 1 kB\n", "only kB"},
		{"devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "-1\n", "non-negative"},
		{"devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "<absent>", "missing"},
		{"devices/system/node/node0/hugepages/hugepages-2MB/nr_hugepages", "1\n", "must be named hugepages-<size>kB"},
		{"devices/system/node/has_memory", "0-1024\n", "out of range"},
		{"devices/system/node/online", "x\n", ""},
		{"devices/pci0000:00/0000:00:02.0/numa_node", "zero\n", "not a decimal integer"},
		{"devices/pci0000:00/0000:00:02.0/numa_node", "-2\n", "out of range"},
		{"devices/pci0000:00/0000:00:02.0/0000:3b:00.0/class", "0x0200\n", "6 lower-case hex digits"},
		{"devices/system/node/nodeX1/cpulist", "0\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.file+"="+tc.content, func(t *testing.T) {
			content := tc.content
			root := writeTree(t, with(twoNodes(), map[string]string{tc.file: content}))
			topo, err := NewFS(root).Discover()
			if tc.file == "devices/system/node/nodeX1/cpulist" {
				// Not a node directory: ignored like has_cpu or power/.
				require.NoError(t, err)
				assert.Len(t, topo.Nodes, 2)
				return
			}
			require.Error(t, err)
			assert.Nil(t, topo)
			var fe *FileError
			if errors.As(err, &fe) {
				assert.Contains(t, fe.Path, filepath.FromSlash(filepath.Dir(tc.file)))
				assert.Equal(t, strings.Trim(content, "\n"), fe.Content, "content quoted")
			} else {
				assert.Contains(t, err.Error(), filepath.Dir(tc.file))
			}
			assert.Contains(t, err.Error(), tc.reason)
		})
	}

	// cpuN/online is read only when cpu/online is missing.
	_, err := NewFS(writeTree(t, with(twoNodes(), map[string]string{
		"devices/system/cpu/online": "<absent>", "devices/system/cpu/cpu1/online": "yes\n",
	}))).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `cpu1/online: invalid content "yes": want 0 or 1`)
}

func TestDiscoverNotASysfsRoot(t *testing.T) {
	_, err := NewFS(t.TempDir()).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a sysfs root")

	_, err = NewFS(filepath.Join(t.TempDir(), "nope")).Discover()
	require.Error(t, err)
}
