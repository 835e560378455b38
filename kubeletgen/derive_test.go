package kubeletgen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

const (
	mi = uint64(1) << 20
	gi = uint64(1) << 30
)

// twoNodes: node0 CPUs 0-3, node1 CPUs 4-7, CPUs 0 and 4 for the host,
// 16 GiB per node, 1100Mi reserved on each, optional hugepages.
func twoNodes(hugepages ...planner.HugepagePlan) planner.Plan {
	plan := planner.Plan{Host: planner.Host{
		ReservedCPUs: bitmask.MustParseCPUList("0,4"),
		MemoryNodes:  bitmask.MustParseNodeList("0-1"),
		OnlineCPUs:   bitmask.MustParseCPUList("0-7"),
		CgroupMode:   cgroupmode.V1,
	}}
	for i := 0; i < 2; i++ {
		name := []string{"node0", "node1"}[i]
		plan.Partitions = append(plan.Partitions, planner.Partition{
			Name: name, Slice: name + ".slice", Nodes: bitmask.NewNodeSet(i),
			CPUs:             bitmask.NewCPUSet(4*i+1, 4*i+2, 4*i+3),
			HostReservedCPUs: bitmask.NewCPUSet(4 * i),
			Memory: []planner.NodeMemory{{Node: i, TotalBytes: 16 * gi, ReservedBytes: 1100 * mi,
				Hugepages: append([]planner.HugepagePlan(nil), hugepages...)}},
			Kubelet: planner.Kubelet{
				CgroupRoot: "/" + name, Port: 10250 + 10*i, HealthzPort: 10248 + 10*i,
				CPUManagerPolicy: "static", MemoryManagerPolicy: "Static", CPUManagerPolicyOptions: map[string]string{"strict-cpu-reservation": "true"},
				TopologyManagerPolicy: "single-numa-node", TopologyManagerScope: "container",
				KubeReservedMemory: 500 * mi, SystemReservedMemory: 500 * mi, EvictionHardMemory: 100 * mi,
			},
			Runtime: planner.Runtime{Kind: planner.RuntimeContainerd, Endpoint: "unix:///run/containerd-" + name + "/containerd.sock"},
		})
	}
	return plan
}

// shownTheMachine makes every partition's kubelet see the whole machine
// (machine.go): the host facts do not say the cgroup mode. The
// derivation for the whole machine is what these tests check.
func shownTheMachine(plan planner.Plan) planner.Plan {
	plan.Host.CgroupMode = ""
	return plan
}

func TestReservedSystemCPUs(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(*planner.Plan)
		want    [2]string
		wantErr string
	}{
		{name: "complement of the partition", want: [2]string{"0,4-7", "0-4"}},
		{name: "fallback without Host.OnlineCPUs", edit: func(p *planner.Plan) { p.Host.OnlineCPUs = bitmask.CPUSet{} }, want: [2]string{"0,4-7", "0-4"}},
		{name: "offline CPUs stay out (kubelet refuses them)", edit: func(p *planner.Plan) {
			p.Host.OnlineCPUs = bitmask.MustParseCPUList("0-6")
			p.Partitions[1].CPUs = bitmask.MustParseCPUList("5-6")
		}, want: [2]string{"0,4-6", "0-4"}},
		{name: "partition CPU not online", edit: func(p *planner.Plan) { p.Host.OnlineCPUs = bitmask.MustParseCPUList("0-6") }, wantErr: "CPUs 7 are not online"},
		{name: "CPUs of no NUMA node stay out (kubelet does not count them)", edit: func(p *planner.Plan) {
			p.Host.OnlineCPUs = bitmask.MustParseCPUList("0-9")
			p.Host.OrphanCPUs = bitmask.MustParseCPUList("8-9")
			p.Host.ReservedCPUs = bitmask.MustParseCPUList("0,4,8-9")
		}, want: [2]string{"0,4-7", "0-4"}},
		{name: "no pod CPUs", edit: func(p *planner.Plan) { p.Partitions[0].CPUs = bitmask.CPUSet{} }, wantErr: "has no CPUs for pods"},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := shownTheMachine(twoNodes())
			if c.edit != nil {
				c.edit(&plan)
			}
			for i := range plan.Partitions {
				got, err := ReservedSystemCPUs(machineOf(t, &plan, &plan.Partitions[i]), &plan.Partitions[i])
				if c.wantErr != "" {
					if err != nil {
						assert.Contains(t, err.Error(), c.wantErr)
						return
					}
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, c.want[i], got.String(), plan.Partitions[i].Name)
			}
			if c.wantErr != "" {
				t.Fatalf("no partition failed with %q", c.wantErr)
			}
		})
	}
	t.Run("one partition holding every CPU", func(t *testing.T) {
		plan := shownTheMachine(twoNodes())
		plan.Partitions = plan.Partitions[:1]
		plan.Host.OnlineCPUs = bitmask.MustParseCPUList("1-3")
		_, err := ReservedSystemCPUs(machineOf(t, &plan, &plan.Partitions[0]), &plan.Partitions[0])
		require.Error(t, err)
		assert.Contains(t, err.Error(), "at least one reserved CPU")
	})
}

func TestReservedMemory(t *testing.T) {
	hp := []planner.HugepagePlan{{PageSize: 2 * mi, Count: 512}, {PageSize: gi, Count: 4}}
	for _, c := range []struct {
		name      string
		plan      planner.Plan
		edit      func(*planner.Plan)
		wantNodes map[int]uint64 // partition node0's reservations
		wantAlloc map[int]uint64
		wantErr   string
	}{
		{
			name: "foreign node whole, own node its reservation", plan: shownTheMachine(twoNodes()),
			wantNodes: map[int]uint64{0: 1100 * mi, 1: 16 * gi},
			wantAlloc: map[int]uint64{0: 16*gi - 1100*mi, 1: 0},
		},
		{
			// The memory manager subtracts hugepages itself: reserving
			// total(n) would underflow its table.
			name: "hugepages are not reserved twice", plan: shownTheMachine(twoNodes(hp...)),
			wantNodes: map[int]uint64{0: 1100 * mi, 1: 11 * gi},
			wantAlloc: map[int]uint64{0: 11*gi - 1100*mi, 1: 0},
		},
		{
			name: "excluded node reserved by everyone", plan: shownTheMachine(twoNodes()),
			edit: func(p *planner.Plan) {
				p.Host.ExcludedNodes = bitmask.NewNodeSet(2)
				p.Host.ExcludedMemory = []planner.NodeMemory{{Node: 2, TotalBytes: 8 * gi}}
			},
			wantNodes: map[int]uint64{0: 1100 * mi, 1: 16 * gi, 2: 8 * gi},
			wantAlloc: map[int]uint64{0: 16*gi - 1100*mi, 1: 0, 2: 0},
		},
		{
			name: "zero reservation on an own node is left out", plan: shownTheMachine(twoNodes()),
			edit:      func(p *planner.Plan) { p.Partitions[0].Memory[0].ReservedBytes = 0 },
			wantNodes: map[int]uint64{1: 16 * gi},
			wantAlloc: map[int]uint64{0: 16 * gi, 1: 0},
		},
		{
			name: "excluded node without description", plan: shownTheMachine(twoNodes()),
			edit:    func(p *planner.Plan) { p.Host.ExcludedNodes = bitmask.NewNodeSet(2) },
			wantErr: "excluded NUMA node 2 has no memory description",
		},
		{
			name: "node described twice", plan: shownTheMachine(twoNodes()),
			edit:    func(p *planner.Plan) { p.Host.ExcludedMemory = []planner.NodeMemory{{Node: 1, TotalBytes: gi}} },
			wantErr: "NUMA node 1 is described twice",
		},
		{
			name: "hugepages beyond the node", plan: shownTheMachine(twoNodes(planner.HugepagePlan{PageSize: gi, Count: 17})),
			wantErr: "planned hugepages",
		},
		{
			name: "reservation beyond what hugepages leave", plan: shownTheMachine(twoNodes(planner.HugepagePlan{PageSize: gi, Count: 16})),
			wantErr: "reserved memory",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := c.plan
			if c.edit != nil {
				c.edit(&plan)
			}
			mach, err := MachineOf(&plan, &plan.Partitions[0])
			var nodes []NodeReservation
			var sum uint64
			if err == nil {
				nodes, sum, err = ReservedMemory(mach, &plan.Partitions[0])
			}
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			got := map[int]uint64{}
			var total uint64
			for _, n := range nodes {
				got[n.Node] = n.Bytes
				total += n.Bytes
				assert.Equal(t, c.wantAlloc[n.Node], n.Allocatable, "node %d allocatable", n.Node)
				assert.Equal(t, plan.Partitions[0].Nodes.Has(n.Node), n.Own)
				assert.NotZero(t, n.Bytes, "zero limits must be left out")
			}
			assert.Equal(t, c.wantNodes, got)
			assert.Equal(t, total, sum)
		})
	}
}

func TestMemoryReservations(t *testing.T) {
	plan := twoNodes()
	p := &plan.Partitions[0]
	kube, system, eviction, err := MemoryReservations(p, Machine{}, 1100*mi+16*gi)
	require.NoError(t, err)
	assert.Equal(t, 500*mi, kube)
	assert.Equal(t, 100*mi, eviction)
	// The plan's systemReserved plus the whole foreign node.
	assert.Equal(t, 500*mi+16*gi, system)
	assert.Equal(t, 1100*mi+16*gi, kube+system+eviction, "kubelet's rule: Σ reservedMemory = kube + system + eviction")

	_, _, _, err = MemoryReservations(p, Machine{}, 500*mi)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "less than kubeReserved + evictionHard")
}

// On cgroup v2 a kubelet shown its partition counts its slice's memory
// alone (the e2e's v2 boot: the host's 900 MiB on node 0 were free memory
// to kubelet, and the kernel killed the filling pod before kubelet saw
// any pressure): the host's reservation moves from systemReserved into
// the eviction threshold, the sum (and so allocatable) unchanged.
func TestMemoryReservationsHostUnseen(t *testing.T) {
	plan := twoNodes()
	p := &plan.Partitions[0]
	kube, system, eviction, err := MemoryReservations(p, Machine{Partition: true, HostMemoryUnseen: true}, 1100*mi)
	require.NoError(t, err)
	assert.Equal(t, []uint64{500 * mi, 0, 600 * mi}, []uint64{kube, system, eviction})

	plan.Host.CgroupMode = cgroupmode.V2
	c, err := Config(&plan, p)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"memory": "0"}, c.SystemReserved)
	assert.Equal(t, "600Mi", c.EvictionHard["memory.available"])
	plan.Host.CgroupMode = cgroupmode.V1
	c, err = Config(&plan, p)
	require.NoError(t, err)
	assert.Equal(t, "500Mi", c.SystemReserved["memory"], "on v1 the served root memory cgroup counts the host's pages")
	assert.Equal(t, "100Mi", c.EvictionHard["memory.available"])
}

// Issue 27: kubeletgen set max-allowable-numa-nodes again, counting the
// nodes its own way, and parsed the options by its own rules. The plan
// decides (planner.checkTopologyLimit); kubeletgen keeps the plan's
// options and refuses, with the allocator's reader of them, what kubelet
// would refuse.
func TestTopologyManagerPolicyOptions(t *testing.T) {
	for _, c := range []struct {
		name    string
		options map[string]string
		want    map[string]string
		wantErr string
	}{
		{name: "none", want: map[string]string{}},
		{name: "plan options kept", options: map[string]string{"prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "16"},
			want: map[string]string{"prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "16"}},
		{name: "limit below kubelet's default", options: map[string]string{"max-allowable-numa-nodes": "4"}, wantErr: `max-allowable-numa-nodes: "4": allowed is a whole number of at least 8`},
		{name: "not a boolean", options: map[string]string{"prefer-closest-numa-nodes": "maybe"}, wantErr: `"maybe" is not a boolean`},
		{name: "unknown", options: map[string]string{"turbo": "true"}, wantErr: "unknown topology manager option"},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := twoNodes()
			p := &plan.Partitions[0]
			p.Kubelet.TopologyManagerOptions = c.options
			got, err := TopologyManagerPolicyOptions(p)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// The plan's taints are typed (planner.Taint, checked where a config or
// a plan file is read: TestTaintsInAPlanFile); kubeletgen only carries
// them over.
func TestTaints(t *testing.T) {
	got := Taints([]planner.Taint{{Key: "dedicated", Value: "numa", Effect: "NoSchedule"}, {Key: "maintenance", Effect: "NoExecute"}})
	require.Len(t, got, 2)
	assert.Equal(t, "dedicated", got[0].Key)
	assert.Equal(t, "numa", got[0].Value)
	assert.Equal(t, "NoSchedule", string(got[0].Effect))
	assert.Equal(t, "maintenance", got[1].Key)
	assert.Equal(t, "", got[1].Value)
	assert.Equal(t, "NoExecute", string(got[1].Effect))
}

func TestConfigFields(t *testing.T) {
	plan := shownTheMachine(twoNodes())
	plan.Partitions[1].Taints = []planner.Taint{{Key: "a", Value: "b", Effect: "NoSchedule"}}
	plan.Partitions[1].Kubelet.ClusterDNS = []string{"10.96.0.10"}
	plan.Partitions[1].Kubelet.ClusterDomain = "cluster.local"
	c, err := Config(&plan, &plan.Partitions[1])
	require.NoError(t, err)
	assert.Equal(t, []string{"10.96.0.10"}, c.ClusterDNS)
	assert.Equal(t, "cluster.local", c.ClusterDomain)
	assert.Equal(t, "systemd", c.CgroupDriver)
	assert.Equal(t, "/node1", c.CgroupRoot)
	assert.Equal(t, int32(10260), c.Port)
	assert.Equal(t, int32(10258), *c.HealthzPort)
	assert.Equal(t, int32(0), c.ReadOnlyPort)
	assert.Equal(t, "unix:///run/containerd-node1/containerd.sock", c.ContainerRuntimeEndpoint)
	assert.Equal(t, "0-4", c.ReservedSystemCPUs)
	assert.Equal(t, "true", c.CPUManagerPolicyOptions["strict-cpu-reservation"])
	assert.Equal(t, map[string]string{"memory": "500Mi"}, c.KubeReserved)
	assert.Equal(t, map[string]string{"memory": "16884Mi"}, c.SystemReserved)
	assert.Equal(t, map[string]string{"memory.available": "100Mi"}, c.EvictionHard)
	require.Len(t, c.ReservedMemory, 2)
	assert.Equal(t, int32(0), c.ReservedMemory[0].NumaNode)
	assert.Equal(t, "16Gi", c.ReservedMemory[0].Limits.Memory().String())
	assert.Equal(t, "1100Mi", c.ReservedMemory[1].Limits.Memory().String())
	assert.Equal(t, "single-numa-node", c.TopologyManagerPolicy)
	require.Len(t, c.RegisterWithTaints, 1)

	plan.Partitions[1].Kubelet.MemoryManagerPolicy = "None"
	c, err = Config(&plan, &plan.Partitions[1])
	require.NoError(t, err)
	assert.Empty(t, c.ReservedMemory, "reservedMemory only with the Static policy")
	assert.Equal(t, map[string]string{"memory": "16884Mi"}, c.SystemReserved, "allocatable stays the partition's share")

	// The plan's CPU Manager options as they are (the planner decided
	// strict-cpu-reservation; a plan file is held to it by
	// planner.CheckPlanFile), never decided again here (issue 27).
	plan.Partitions[1].Kubelet.CPUManagerPolicyOptions = map[string]string{"full-pcpus-only": "true", "strict-cpu-reservation": "true"}
	c, err = Config(&plan, &plan.Partitions[1])
	require.NoError(t, err)
	assert.Equal(t, plan.Partitions[1].Kubelet.CPUManagerPolicyOptions, c.CPUManagerPolicyOptions)
}

func TestMarshalRoundTrip(t *testing.T) {
	plan := twoNodes(planner.HugepagePlan{PageSize: 2 * mi, Count: 512})
	c, err := Config(&plan, &plan.Partitions[0])
	require.NoError(t, err)
	b, err := Marshal("node0", c)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "# KubeletConfiguration of numa-partition node0"))
	assert.NotContains(t, string(b), ": 0s", "zero durations are left to kubelet's defaults")
	assert.NotContains(t, string(b), "logging:")
	back, err := Unmarshal(b)
	require.NoError(t, err)
	again, err := Marshal("node0", back)
	require.NoError(t, err)
	assert.Equal(t, string(b), string(again))

	_, err = Unmarshal(append(b, []byte("cpuManagerPolicyy: static\n")...))
	require.Error(t, err, "strict decoding refuses unknown fields")
}

// withPageSizes gives every node of plan the page sizes 2Mi and 1Gi, as
// discovery does on x86-64: the plan then carries the hugepage view.
func withPageSizes(plan planner.Plan) planner.Plan {
	for i := range plan.Partitions {
		for j := range plan.Partitions[i].Memory {
			plan.Partitions[i].Memory[j].PageSizes = []uint64{2 * mi, gi}
		}
	}
	return plan
}

func TestHugepageView(t *testing.T) {
	plan := withPageSizes(twoNodes(planner.HugepagePlan{PageSize: 2 * mi, Count: 16}))
	plan.Partitions[1].Memory[0].Hugepages = []planner.HugepagePlan{{PageSize: 2 * mi, Count: 24}, {PageSize: gi, Count: 2}}
	want := map[string][]SysfsValue{
		"node0": {
			{"devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages", "0"},
			{"devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "16"},
			{"devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages", "0"},
			{"devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "0"},
			{"kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "0"},
			{"kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "16"},
		},
		"node1": {
			{"devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages", "0"},
			{"devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "0"},
			{"devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages", "2"},
			{"devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "24"},
			{"kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "2"},
			{"kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "24"},
		},
	}
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		view, ok, err := HugepageView(&plan, p)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, want[p.Name], view, p.Name)
	}

	t.Run("no view without every node's page sizes", func(t *testing.T) {
		old := withPageSizes(twoNodes())
		old.Partitions[1].Memory[0].PageSizes = nil
		view, ok, err := HugepageView(&old, &old.Partitions[0])
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Empty(t, view)
	})

	// Shown the whole machine, a foreign node is reserved whole: with
	// the hugepage view it sees no hugepages there, without it total −
	// the hugepages it does see. Shown its partition, it has no foreign
	// node to reserve.
	t.Run("foreign reservation follows what the kubelet sees", func(t *testing.T) {
		for _, c := range []struct {
			name    string
			plan    planner.Plan
			foreign []uint64
		}{
			{"partition", withPageSizes(twoNodes(planner.HugepagePlan{PageSize: gi, Count: 4})), nil},
			{"machine, hugepage view", shownTheMachine(withPageSizes(twoNodes(planner.HugepagePlan{PageSize: gi, Count: 4}))), []uint64{16 * gi}},
			{"machine, no hugepage view", twoNodes(planner.HugepagePlan{PageSize: gi, Count: 4}), []uint64{12 * gi}},
		} {
			nodes, total, err := ReservedMemory(machineOf(t, &c.plan, &c.plan.Partitions[0]), &c.plan.Partitions[0])
			require.NoError(t, err, c.name)
			require.Len(t, nodes, 1+len(c.foreign), c.name)
			assert.Equal(t, 12*gi-1100*mi, nodes[0].Allocatable, c.name)
			want := 1100 * mi
			for i, f := range c.foreign {
				assert.Equal(t, f, nodes[1+i].Bytes, c.name)
				assert.Equal(t, uint64(0), nodes[1+i].Allocatable, c.name)
				want += f
			}
			assert.Equal(t, want, total, c.name)
		}
	})
}

func TestResources(t *testing.T) {
	hp := planner.HugepagePlan{PageSize: 2 * mi, Count: 512}
	t.Run("with the hugepage view every resource is the share", func(t *testing.T) {
		plan := withPageSizes(twoNodes(hp))
		r, err := Resources(&plan, &plan.Partitions[1])
		require.NoError(t, err)
		assert.Equal(t, "node1", r.Partition)
		// Its own node's CPUs (the host's CPU 4 among them) and memory.
		assert.Equal(t, map[string]string{"cpu": "4", "memory": "16Gi", "hugepages-2Mi": "1Gi", "hugepages-1Gi": "0"}, r.Capacity)
		want := map[string]string{"cpu": "3", "memory": "14260Mi", "hugepages-2Mi": "1Gi", "hugepages-1Gi": "0"}
		assert.Equal(t, want, r.Allocatable)
		assert.Equal(t, want, r.Share)
		assert.Empty(t, r.Mismatches)
	})
	t.Run("without it the machine's pools show, and the report says so", func(t *testing.T) {
		plan := twoNodes(hp)
		r, err := Resources(&plan, &plan.Partitions[0])
		require.NoError(t, err)
		assert.Equal(t, "2Gi", r.Allocatable["hugepages-2Mi"])
		assert.Equal(t, "1Gi", r.Share["hugepages-2Mi"])
		assert.Equal(t, []string{"hugepages-2Mi: allocatable 2Gi, share 1Gi"}, r.Mismatches)
		assert.Equal(t, r.Share["memory"], r.Allocatable["memory"], "memory stays exact either way")
	})
}

func TestResourcesEphemeralStorage(t *testing.T) {
	const capacity = uint64(1) << 40
	eviction := planner.NodefsEviction(capacity)
	share := uint64(300) << 30
	plan := withPageSizes(twoNodes())
	plan.Partitions[0].EphemeralStorage = &planner.StorageShare{
		Filesystem: planner.Filesystem{Path: "/", Device: 1, CapacityBytes: capacity},
		ShareBytes: share, EvictionBytes: eviction, SystemReservedBytes: capacity - eviction - share}
	plan.Partitions[0].PIDs = &planner.PIDShare{Limit: 4194304, Share: 1 << 20, SystemReserved: 4194304 - 1<<20}

	c, err := Config(&plan, &plan.Partitions[0])
	require.NoError(t, err)
	assert.Equal(t, "10%", c.EvictionHard["nodefs.available"], "the threshold the share's arithmetic assumes, written out")
	assert.Equal(t, strconv.FormatUint(capacity-eviction-share, 10), c.SystemReserved["ephemeral-storage"])
	assert.Equal(t, "3145728", c.SystemReserved["pid"])

	r, err := Resources(&plan, &plan.Partitions[0])
	require.NoError(t, err)
	assert.Equal(t, "1Ti", r.Capacity["ephemeral-storage"])
	assert.Equal(t, "300Gi", r.Allocatable["ephemeral-storage"])
	assert.Equal(t, "300Gi", r.Share["ephemeral-storage"])
	assert.Empty(t, r.Mismatches)

	// A reservation that does not leave the share shows as a mismatch.
	plan.Partitions[0].EphemeralStorage.SystemReservedBytes -= 1 << 30
	r, err = Resources(&plan, &plan.Partitions[0])
	require.NoError(t, err)
	assert.Equal(t, []string{"ephemeral-storage: allocatable 301Gi, share 300Gi"}, r.Mismatches)
}

// machineOf is MachineOf, which must succeed.
func machineOf(t *testing.T, plan *planner.Plan, p *planner.Partition) Machine {
	t.Helper()
	m, err := MachineOf(plan, p)
	require.NoError(t, err)
	return m
}
