package planner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

type fixturePart struct{ name, nodes, cpus string }

// The default config (socket mode, auto reserved CPUs) on every real
// machine in testdata. Expected values were checked by hand against each
// dump's FACTS.json and lscpu output; the invariants below are checked
// independently of them.
var fixturePlans = []struct {
	fixture  string
	reserved string // Host.ReservedCPUs
	parts    []fixturePart
	errs     []string
}{
	{"ghw-offlineCPUs", "0", []fixturePart{{"node0", "0", "1"}}, nil},
	{"ghw-xeon-L5640", "0-1,12-13", []fixturePart{{"node0", "0", "2,4,6,8,10,14,16,18,20,22"}, {"node1", "1", "3,5,7,9,11,15,17,19,21,23"}}, nil},
	{"hwloc-128arm-2pa2n8cluster4co", "0,64", []fixturePart{{"node0", "0-1", "1-63"}, {"node2", "2-3", "65-127"}}, nil},
	{"hwloc-128ia64-17n4s2c", "0,8,16,24,32,40,48,56,64,72,80,88,96,104,112,120", []fixturePart{{"node0", "0,16", "1-7"}, {"node1", "1", "9-15"}, {"node2", "2", "17-23"}, {"node3", "3", "25-31"}, {"node4", "4", "33-39"}, {"node5", "5", "41-47"}, {"node6", "6", "49-55"}, {"node7", "7", "57-63"}, {"node8", "8", "65-71"}, {"node9", "9", "73-79"}, {"node10", "10", "81-87"}, {"node11", "11", "89-95"}, {"node12", "12", "97-103"}, {"node13", "13", "105-111"}, {"node14", "14", "113-119"}, {"node15", "15", "121-127"}}, nil},
	{"hwloc-16amd64-4n4c-cgroup-distance-merge", "0,4,8,12", []fixturePart{{"node0", "0", "1-3"}, {"node1", "1", "5-7"}, {"node2", "2", "9-11"}, {"node3", "3", "13-15"}}, nil},
	{"hwloc-16amd64-8n2c", "0,2,4,6,8,10,12,14", []fixturePart{{"node0", "0", "1"}, {"node1", "1", "3"}, {"node2", "2", "5"}, {"node3", "3", "7"}, {"node4", "4", "9"}, {"node5", "5", "11"}, {"node6", "6", "13"}, {"node7", "7", "15"}}, nil},
	{"hwloc-16amd64-8n2c-cpusets", "0,2,6,8,10,12,14", []fixturePart{{"node0", "0", "1"}, {"node1", "1", "3"}, {"node2", "2", "5"}, {"node3", "3", "7"}, {"node4", "4", "9"}, {"node5", "5", "11"}, {"node6", "6", "13"}, {"node7", "7", "15"}}, nil},
	{"hwloc-256ppc-8n8s4t", "0-3,32-35,64-67,96-99,128-131,160-163,192-195,224-227", []fixturePart{{"node0", "0", "4-31"}, {"node1", "1", "36-63"}, {"node4", "4", "68-95"}, {"node5", "5", "100-127"}, {"node8", "8", "132-159"}, {"node9", "9", "164-191"}, {"node12", "12", "196-223"}, {"node13", "13", "228-255"}}, nil},
	{"hwloc-32amd64-4s2n4c-cgroup2", "0,8,16,24", []fixturePart{{"node0", "0-1", "1-7"}, {"node2", "2-3", "9-15"}, {"node4", "4-5", "17-23"}, {"node6", "6-7", "25-31"}}, nil},
	{"hwloc-32em64t-2n8c+dax+nvme+mic+dimms", "0,8", []fixturePart{{"node0", "0", "1-7"}, {"node1", "1", "9-15"}}, nil},
	{"hwloc-32intel64-2p8co2t+8ve", "0,8,16,24", []fixturePart{{"node0", "0", "1-7,17-23"}, {"node1", "1", "9-15,25-31"}}, nil},
	{"hwloc-40intel64-2g2n4c+pcilocality", "0-3", []fixturePart{{"node0", "0", "4,8,12,16,20,24,28,32,36"}, {"node1", "1", "5,9,13,17,21,25,29,33,37"}, {"node2", "2", "6,10,14,18,22,26,30,34,38"}, {"node3", "3", "7,11,15,19,23,27,31,35,39"}}, nil},
	{"hwloc-48amd64-4pa2n6c-sparse", "0,12,24,36", []fixturePart{{"node0", "0-1", "1-11"}, {"node2", "2,33", "13-23"}, {"node34", "34,45", "25-35"}, {"node72", "72-73", "37-47"}}, nil},
	{"hwloc-64amd64-4s2n4ca2co", "0-1,16-17,32-33,48-49", []fixturePart{{"node0", "0-1", "2-15"}, {"node2", "2-3", "18-31"}, {"node4", "4-5", "34-47"}, {"node6", "6-7", "50-63"}}, nil},
	{"hwloc-8em64t-2s2ca2c-buggynuma", "0", []fixturePart{{"node0", "0-7", "1-7"}}, nil},
	{"hwloc-96em64t-4no4pa3ca2co", "0,24,48,72", []fixturePart{{"node0", "0", "1-23"}, {"node1", "1", "25-47"}, {"node2", "2", "49-71"}, {"node3", "3", "73-95"}}, nil},
	{"hwloc-memorysidecaches", "0-1,40-41", []fixturePart{{"node0", "0,2", "2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,72,74,76,78"}, {"node1", "1,3", "3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,43,45,47,49,51,53,55,57,59,61,63,65,67,69,71,73,75,77,79"}}, nil},
	{"hwloc-nvidiagpunumanodes", "0-3,88-91", []fixturePart{{"node0", "0,250-255", "4-15"}, {"node8", "8", "92-103"}}, nil},
	{"hwloc-offline-cpu0-node0", "4-6,8,10,12,14,16,18,20", []fixturePart{{"node1", "1", "7,9,11,13,15,17,19"}}, nil},
	{"ocp-bm-master", "0-1,56-57", []fixturePart{{"node0", "0", "2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,58,60,62,64,66,68,70,72,74,76,78,80,82,84,86,88,90,92,94,96,98,100,102,104,106,108,110"}, {"node1", "1", "3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43,45,47,49,51,53,55,59,61,63,65,67,69,71,73,75,77,79,81,83,85,87,89,91,93,95,97,99,101,103,105,107,109,111"}}, nil},
	{"ocp-bm-worker1", "0-1,40-41", []fixturePart{{"node0", "0", "2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,72,74,76,78"}, {"node1", "1", "3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,43,45,47,49,51,53,55,57,59,61,63,65,67,69,71,73,75,77,79"}}, nil},
	{"ocp-bm-worker2", "0-1", []fixturePart{{"node0", "0", "2,4,6,8,10,12,14,16,18,20,22,24,26,28,30"}, {"node1", "1", "3,5,7,9,11,13,15,17,19,21,23,25,27,29,31"}}, nil},
	{"qemu-2node-v2", "", nil, []string{
		`key "kubelet.kube_reserved_memory": node 0 (partition node0) has 1030484Ki of memory, less than the 1100Mi its kubelet reserves there (kube + system + eviction); lower them or spread them with host.reserved_memory`,
		`key "kubelet.kube_reserved_memory": node 1 (partition node1) has 986064Ki of memory, less than the 1100Mi its kubelet reserves there (kube + system + eviction); lower them or spread them with host.reserved_memory`}},
	// Synthetic (lscpu's rules): sockets and cores from the sibling masks
	// of an old kernel; cpuN directories beyond cpu/present.
	{"synthetic-powervm-lpar-pkgid-minus1", "0-3,8-11", []fixturePart{{"node0", "0", "4-7"}, {"node1", "1", "12-15"}}, nil},
	{"synthetic-oldkernel-masks-only", "0,4", []fixturePart{{"node0", "0", "1-3,5-7"}}, nil},
	{"synthetic-sparc-dirs-beyond-present", "0-1", []fixturePart{{"node0", "0", "2-3"}}, nil},
	// qemu-2node-v2's CPUs with 64 GiB per node and NICs (issue 23).
	{"synthetic-2node-nics", "0,2", []fixturePart{{"node0", "0", "1"}, {"node1", "1", "3"}}, nil},
}

func discoverFixture(t testing.TB, name string) *numa.Topology {
	t.Helper()
	topo, err := numa.NewFS(filepath.Join("..", "..", "testdata", "sysfs", name, "sys")).Discover()
	require.NoError(t, err)
	return topo
}

func TestPlanRealFixtures(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/sysfs/*/sys")
	require.NoError(t, err)
	require.Len(t, fixturePlans, len(dirs), "one row per fixture")
	for _, tt := range fixturePlans {
		t.Run(tt.fixture, func(t *testing.T) {
			topo := discoverFixture(t, tt.fixture)
			p, err := NewPlan(topo, &config.Config{Kubelet: config.KubeletConfig{Hostname: "h"}})
			if tt.errs != nil {
				require.Error(t, err)
				assert.Equal(t, strings.Join(tt.errs, "\n"), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.reserved, p.Host.ReservedCPUs.String())
			var got []fixturePart
			for _, part := range p.Partitions {
				got = append(got, fixturePart{part.Name, part.Nodes.String(), part.CPUs.String()})
			}
			assert.Equal(t, tt.parts, got)
			checkInvariants(t, topo, p)
			if online := factsOnline(t, tt.fixture); !online.IsEmpty() {
				all := p.Host.ReservedCPUs.Intersect(online)
				for _, part := range p.Partitions {
					all = all.Union(part.CPUs)
				}
				assert.Equal(t, online.String(), all.String(), "every online CPU of FACTS.json is planned")
			}
		})
	}
}

// factsOnline is the online CPU list FACTS.json recorded, empty if none.
func factsOnline(t *testing.T, fixture string) bitmask.CPUSet {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sysfs", fixture, "FACTS.json"))
	if err != nil {
		return bitmask.CPUSet{}
	}
	var facts struct {
		Online *string `json:"cpu_online"`
	}
	require.NoError(t, json.Unmarshal(data, &facts))
	if facts.Online == nil {
		return bitmask.CPUSet{}
	}
	s, err := bitmask.ParseCPUList(*facts.Online)
	require.NoError(t, err)
	return s
}
