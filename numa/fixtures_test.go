package numa

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

const fixtureRoot = "../testdata/sysfs"

// fixtures lists every machine dump in testdata/sysfs.
func fixtures(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(fixtureRoot)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	require.GreaterOrEqual(t, len(names), 23, "fixtures missing from %s", fixtureRoot)
	return names
}

func discoverFixture(t testing.TB, name string) *Topology {
	t.Helper()
	topo, err := NewFS(filepath.Join(fixtureRoot, name, "sys")).Discover()
	require.NoError(t, err, name)
	return topo
}

// TestDiscoverInvariants holds on every dump: the model is consistent
// whatever the firmware said.
func TestDiscoverInvariants(t *testing.T) {
	for _, name := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			topo := discoverFixture(t, name)
			require.NotEmpty(t, topo.Nodes)
			require.NotEmpty(t, topo.CPUs)

			var inNodes bitmask.CPUSet
			for i, n := range topo.Nodes {
				if i > 0 {
					assert.Less(t, topo.Nodes[i-1].ID, n.ID, "nodes ascending")
				}
				assert.False(t, inNodes.Intersects(n.CPUs), "node %d CPUs %s overlap another node", n.ID, n.CPUs)
				inNodes = inNodes.Union(n.CPUs)
				assert.True(t, n.CPUs.IsSubsetOf(topo.Online), "node %d has offline CPUs", n.ID)
				assert.Equal(t, kindOf(!n.CPUs.IsEmpty(), n.MemoryBytes > 0), n.Kind)
				assert.LessOrEqual(t, n.FreeBytes, n.MemoryBytes)
				if n.Distances != nil {
					require.Len(t, n.Distances, len(topo.Nodes))
					d, ok := topo.Distance(n.ID, n.ID)
					assert.True(t, ok)
					assert.Equal(t, 10, d, "local distance of node %d", n.ID)
				}
				for j := 1; j < len(n.Hugepages); j++ {
					assert.Less(t, n.Hugepages[j-1].PageSize, n.Hugepages[j].PageSize)
				}
			}

			var inSockets bitmask.CPUSet
			for _, s := range topo.Sockets {
				var inCores bitmask.CPUSet
				for _, c := range s.Cores {
					assert.Equal(t, s.ID, c.Socket)
					assert.False(t, inCores.Intersects(c.CPUs), "cores overlap in socket %d", s.ID)
					inCores = inCores.Union(c.CPUs)
					if c.Node >= 0 {
						assert.True(t, s.Nodes.Has(c.Node))
					}
				}
				assert.True(t, inCores.Equal(s.CPUs), "socket %d: cores %s, CPUs %s", s.ID, inCores, s.CPUs)
				assert.False(t, inSockets.Intersects(s.CPUs))
				inSockets = inSockets.Union(s.CPUs)
			}
			assert.True(t, inSockets.IsSubsetOf(topo.Online))

			for i, c := range topo.CPUs {
				if i > 0 {
					assert.Less(t, topo.CPUs[i-1].ID, c.ID)
				}
				assert.Equal(t, topo.Online.Has(c.ID), c.Online)
				if c.Online && c.Node >= 0 {
					n, ok := topo.Node(c.Node)
					require.True(t, ok)
					assert.True(t, n.CPUs.Has(c.ID), "cpu%d not in node %d", c.ID, c.Node)
				}
			}
			assert.NotNil(t, topo.Warnings)

			// The JSON form round-trips: it is the stable output.
			b, err := json.Marshal(topo)
			require.NoError(t, err)
			var back Topology
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, topo.Online.String(), back.Online.String())
			assert.Len(t, back.Nodes, len(topo.Nodes))
		})
	}
}

// expected is the part of expected.json (derived from lscpu) compared.
type expected struct {
	CPUs       int      `json:"cpus"`
	OnlineCPUs string   `json:"onlineCpus"`
	Caveats    []string `json:"caveats"`
	Sockets    []struct {
		ID    int    `json:"id"`
		Nodes []int  `json:"nodes"`
		CPUs  string `json:"cpus"`
		Cores int    `json:"cores"`
	} `json:"sockets"`
	Nodes []struct {
		ID   int    `json:"id"`
		CPUs string `json:"cpus"`
	} `json:"nodes"`
	Cores  int `json:"cores"`
	CPUMap []struct {
		CPU        int  `json:"cpu"`
		Node       *int `json:"node"`
		Online     bool `json:"online"`
		PhysCore   *int `json:"physCore"`
		PhysSocket *int `json:"physSocket"`
	} `json:"cpuMap"`
}

// TestDiscoverMatchesLscpu compares discovery with expected.json on every
// fixture that has one.
func TestDiscoverMatchesLscpu(t *testing.T) {
	compared := 0
	for _, name := range fixtures(t) {
		b, err := os.ReadFile(filepath.Join(fixtureRoot, name, "expected.json"))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		compared++
		t.Run(name, func(t *testing.T) {
			var want expected
			require.NoError(t, json.Unmarshal(b, &want))
			topo := discoverFixture(t, name)

			// lscpu's CPU(s) counts present CPUs.
			assert.Equal(t, want.CPUs, topo.Present.Len(), "CPU count")
			assert.Equal(t, cpus(t, want.OnlineCPUs).String(), topo.Online.String(), "online")

			require.Len(t, topo.Sockets, len(want.Sockets), "sockets")
			totalCores := 0
			for i, ws := range want.Sockets {
				s := topo.Sockets[i]
				assert.Equal(t, ws.ID, s.ID, "socket id")
				assert.Equal(t, bitmask.NewNodeSet(ws.Nodes...), s.Nodes, "socket %d nodes", ws.ID)
				assert.Equal(t, cpus(t, ws.CPUs).String(), s.CPUs.String(), "socket %d CPUs", ws.ID)
				assert.Len(t, s.Cores, ws.Cores, "socket %d cores", ws.ID)
				totalCores += len(s.Cores)
			}
			// lscpu also counts the cores of offline CPUs that kept their
			// topology files; discovery's cores hold online CPUs only.
			if topo.Present.IsSubsetOf(topo.Online) {
				assert.Equal(t, want.Cores, totalCores, "cores")
			} else {
				assert.LessOrEqual(t, totalCores, want.Cores, "cores")
			}

			require.Len(t, topo.Nodes, len(want.Nodes), "nodes")
			// Node → CPUs from lscpu's per-CPU table, which (like
			// discovery) puts a CPU listed by several nodes in the lowest.
			fromMap := map[int][]int{}
			for _, c := range want.CPUMap {
				if c.Node != nil {
					fromMap[*c.Node] = append(fromMap[*c.Node], c.CPU)
				}
			}
			for i, wn := range want.Nodes {
				n := topo.Nodes[i]
				assert.Equal(t, wn.ID, n.ID, "node id")
				assert.Equal(t, bitmask.NewCPUSet(fromMap[wn.ID]...).String(), n.CPUs.String(), "node %d CPUs (per-CPU table)", wn.ID)
				if len(want.Caveats) == 0 { // lscpu's summary agrees with its table
					assert.Equal(t, cpus(t, wn.CPUs).String(), n.CPUs.String(), "node %d CPUs (summary)", wn.ID)
				}
			}

			byID := map[int]CPU{}
			for _, c := range topo.CPUs {
				byID[c.ID] = c
			}
			for _, wc := range want.CPUMap {
				c, ok := byID[wc.CPU]
				require.True(t, ok, "cpu%d missing", wc.CPU)
				assert.Equal(t, wc.Online, c.Online, "cpu%d online", wc.CPU)
				if wc.PhysSocket != nil {
					assert.Equal(t, *wc.PhysSocket, c.Socket, "cpu%d socket", wc.CPU)
				}
				if wc.PhysCore != nil {
					assert.Equal(t, *wc.PhysCore, c.Core, "cpu%d core", wc.CPU)
				}
				if wc.Node != nil {
					assert.Equal(t, *wc.Node, c.Node, "cpu%d node", wc.CPU)
				}
			}
		})
	}
	assert.Equal(t, 18, compared, "fixtures with expected.json")
}

func cpus(t *testing.T, list string) bitmask.CPUSet {
	t.Helper()
	s, err := bitmask.ParseCPUList(list)
	require.NoError(t, err)
	return s
}

// TestDiscoverMatchesLstopo compares with hwloc's lstopo output where the
// dump has no expected.json: node ids, each node's CPUs, package ids (when
// hwloc prints them) and cores as sets of CPUs.
func TestDiscoverMatchesLstopo(t *testing.T) {
	compared := 0
	for _, name := range fixtures(t) {
		path := filepath.Join(fixtureRoot, name, "reference", "hwloc-lstopo.console")
		if _, err := os.Stat(path); err != nil || fileExists(filepath.Join(fixtureRoot, name, "expected.json")) {
			continue
		}
		compared++
		t.Run(name, func(t *testing.T) {
			ref := parseLstopo(t, path)
			topo := discoverFixture(t, name)

			var nodeIDs []int
			for id := range ref.nodeCPUs {
				nodeIDs = append(nodeIDs, id)
			}
			slices.Sort(nodeIDs)
			require.Equal(t, nodeIDs, topo.NodeIDs().IDs(), "node ids")
			for _, id := range nodeIDs {
				n, _ := topo.Node(id)
				assert.Equal(t, bitmask.NewCPUSet(ref.nodeCPUs[id]...).String(), n.CPUs.String(), "node %d CPUs", id)
			}

			var got []string
			for _, s := range topo.Sockets {
				for _, c := range s.Cores {
					got = append(got, c.CPUs.String())
				}
			}
			slices.Sort(got)
			assert.Equal(t, ref.cores, got, "cores")

			if len(ref.packages) > 0 {
				var ids []int
				for _, s := range topo.Sockets {
					ids = append(ids, s.ID)
				}
				assert.Equal(t, ref.packages, ids, "package ids")
			}
		})
	}
	assert.Equal(t, 3, compared, "fixtures compared with lstopo")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

type lstopo struct {
	nodeCPUs map[int][]int // NUMANode P# → PU P#s
	cores    []string      // each Core's PUs, sorted
	packages []int         // Package P#s, ascending; empty if hwloc printed none
}

var lstopoObj = regexp.MustCompile(`^( *)(NUMANode|Package|Core|PU|Group\d*|Machine)\b[^(]*(?:\(P#(\d+))?`)

// parseLstopo reads lstopo's indented tree. A NUMANode is attached to its
// parent object; a PU belongs to the node attached to its nearest ancestor
// that has one.
func parseLstopo(t *testing.T, path string) lstopo {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	type frame struct {
		indent int
		node   int // NUMANode attached to this object, -1 if none
	}
	ref := lstopo{nodeCPUs: map[int][]int{}}
	var stack []frame
	var core []int
	flushCore := func() {
		if core != nil {
			ref.cores = append(ref.cores, bitmask.NewCPUSet(core...).String())
			core = nil
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := lstopoObj.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		indent, kind := len(m[1]), m[2]
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		id := -1
		if m[3] != "" {
			id, err = strconv.Atoi(m[3])
			require.NoError(t, err)
		}
		switch {
		case kind == "NUMANode":
			require.NotEmpty(t, stack, "NUMANode without parent")
			stack[len(stack)-1].node = id
			if _, ok := ref.nodeCPUs[id]; !ok {
				ref.nodeCPUs[id] = []int{}
			}
			continue
		case kind == "Package" && id >= 0:
			ref.packages = append(ref.packages, id)
		case kind == "Core":
			flushCore()
			core = []int{}
		case kind == "PU":
			core = append(core, id)
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].node >= 0 {
					ref.nodeCPUs[stack[i].node] = append(ref.nodeCPUs[stack[i].node], id)
					break
				}
			}
		}
		if strings.HasPrefix(kind, "Group") || kind == "Machine" || kind == "Package" || kind == "Core" {
			stack = append(stack, frame{indent: indent, node: -1})
		}
	}
	require.NoError(t, sc.Err())
	flushCore()
	slices.Sort(ref.cores)
	slices.Sort(ref.packages)
	return ref
}

// machineInfo is the part of cadvisor's MachineInfo (captured on the live
// OpenShift nodes) compared.
type machineInfo struct {
	NumCores   int `json:"num_cores"`
	NumSockets int `json:"num_sockets"`
	Topology   []struct {
		NodeID int    `json:"node_id"`
		Memory uint64 `json:"memory"`
		Cores  []struct {
			CoreID    int   `json:"core_id"`
			ThreadIDs []int `json:"thread_ids"`
			SocketID  int   `json:"socket_id"`
		} `json:"cores"`
	} `json:"topology"`
}

// TestDiscoverMatchesMachineInfo compares with what cadvisor (and so
// kubelet) saw on the live machines the OpenShift dumps come from.
func TestDiscoverMatchesMachineInfo(t *testing.T) {
	compared := 0
	for _, name := range fixtures(t) {
		b, err := os.ReadFile(filepath.Join(fixtureRoot, name, "reference", "machineinfo.json"))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		compared++
		t.Run(name, func(t *testing.T) {
			var mi machineInfo
			require.NoError(t, json.Unmarshal(b, &mi))
			topo := discoverFixture(t, name)

			assert.Equal(t, mi.NumCores, topo.Online.Len(), "num_cores")
			assert.Len(t, topo.Sockets, mi.NumSockets, "num_sockets")
			// num_physical_cores is not compared: that cadvisor counted
			// core_id values without the socket (28 on 2x28-core
			// machines); the per-node cores below are exact.
			physical, listed := 0, 0
			for _, s := range topo.Sockets {
				physical += len(s.Cores)
			}
			for _, mn := range mi.Topology {
				listed += len(mn.Cores)
			}
			assert.Equal(t, listed, physical, "cores")

			require.Len(t, topo.Nodes, len(mi.Topology))
			for i, mn := range mi.Topology {
				n := topo.Nodes[i]
				assert.Equal(t, mn.NodeID, n.ID)
				assert.Equal(t, mn.Memory, n.MemoryBytes, "node %d memory", n.ID)
				var want, got []string
				var all []int
				for _, c := range mn.Cores {
					want = append(want, bitmask.NewCPUSet(c.ThreadIDs...).String())
					all = append(all, c.ThreadIDs...)
				}
				for _, s := range topo.Sockets {
					for _, c := range s.Cores {
						if c.Node == n.ID {
							got = append(got, c.CPUs.String())
						}
					}
				}
				slices.Sort(want)
				slices.Sort(got)
				assert.Equal(t, want, got, "node %d cores", n.ID)
				assert.Equal(t, bitmask.NewCPUSet(all...).String(), n.CPUs.String(), "node %d CPUs", n.ID)
			}
		})
	}
	assert.Equal(t, 3, compared, "fixtures compared with machineinfo.json")
}
