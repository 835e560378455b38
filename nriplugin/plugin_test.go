package nriplugin

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
)

const gi = int64(1) << 30

// Two NUMA nodes of two 2-thread cores each: node 0 has cores {0,1} and
// {2,3}, node 1 {4,5} and {6,7}; 10Gi of memory (1Gi of it reserved on
// node 0) and 1Gi of 2Mi pages each.
func testTopology() CPUTopology {
	var cores []Core
	for i := 0; i < 4; i++ {
		cores = append(cores, Core{Node: i / 2, CPUs: bitmask.NewCPUSet(2*i, 2*i+1)})
	}
	return CPUTopology{Cores: cores, Distances: map[int]map[int]int{0: {0: 10, 1: 20}, 1: {0: 20, 1: 10}}}
}

func testConfig(policy string) allocator.Config {
	cfg := allocator.Config{Policy: policy, Scope: "container"}
	for i := 0; i < 2; i++ {
		cfg.Nodes = append(cfg.Nodes, allocator.NodeResources{ID: i, Memory: uint64(10 * gi),
			Hugepages: map[uint64]uint64{2 << 20: uint64(gi)}, Reserved: map[allocator.ResourceName]uint64{}})
	}
	cfg.Nodes[0].Reserved[allocator.ResourceMemory] = uint64(gi) // the Static policy needs some

	return cfg
}

type harness struct {
	t      *testing.T
	dir    string
	mode   string
	policy string
	scope  string    // "" = container
	pods   PodReader // nil = none
	server *daemon.Server
	plugin *Plugin
	logs   *bytes.Buffer
}

func newHarness(t *testing.T, mode, policy string) *harness {
	h := &harness{t: t, dir: t.TempDir(), mode: mode, policy: policy}
	h.restart()
	return h
}

// restart starts a new server and plugin on the same state dir, as after
// a kill -9 of the daemon: nothing is shut down first.
func (h *harness) restart() {
	h.t.Helper()
	h.logs = &bytes.Buffer{}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	scope := h.scope
	if scope == "" {
		scope = "container"
	}
	cfg := testConfig(h.policy)
	cfg.Scope = scope
	srv, err := daemon.NewServer(daemon.ServerOptions{Partition: "node0", Config: cfg, StateDir: h.dir, Logger: log})
	require.NoError(h.t, err)
	p, err := New(Options{Partition: "node0", Name: "numa-partition-node0", Mode: h.mode, CPUs: testTopology(), Policy: h.policy, Scope: scope, Pods: h.pods, Logger: log}, srv)
	require.NoError(h.t, err)
	h.server, h.plugin = srv, p
}

func sandbox(uid, qos string) *api.PodSandbox {
	parent := "node0-kubepods-pod" + uid + ".slice"
	if qos != "" {
		parent = "node0-kubepods-" + qos + "-pod" + uid + ".slice"
	}
	return &api.PodSandbox{Id: "sb-" + uid, Uid: uid, Name: "pod-" + uid, Namespace: "ns", Linux: &api.LinuxPodSandbox{CgroupParent: parent}}
}

// ctr is a container as kubelet creates it: cpu.shares from the request,
// quota from the limit, the memory and hugepage limits.
func ctr(id, podUID, name string, milli int64, memory int64, hugepages2M int64) *api.Container {
	res := &api.LinuxResources{Cpu: &api.LinuxCPU{Shares: api.UInt64(uint64(milli * 1024 / 1000))}, Memory: &api.LinuxMemory{}}
	if milli > 0 {
		res.Cpu.Quota, res.Cpu.Period = api.Int64(milli*100), api.UInt64(100000)
	}
	if memory > 0 {
		res.Memory.Limit = api.Int64(memory)
	}
	if hugepages2M > 0 {
		res.HugepageLimits = []*api.HugepageLimit{{PageSize: "2MB", Limit: uint64(hugepages2M)}}
	}
	return &api.Container{Id: id, PodSandboxId: "sb-" + podUID, Name: name, State: api.ContainerState_CONTAINER_CREATED,
		Linux: &api.LinuxContainer{Resources: res}}
}

func (h *harness) create(pod *api.PodSandbox, c *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return h.plugin.CreateContainer(context.Background(), pod, c)
}

func (h *harness) mustCreate(pod *api.PodSandbox, c *api.Container) (mems, cpus string, updates []*api.ContainerUpdate) {
	h.t.Helper()
	adj, updates, err := h.create(pod, c)
	require.NoError(h.t, err)
	res := adj.GetLinux().GetResources().GetCpu()
	// What the runtime then runs it with.
	c.Linux.Resources.Cpu.Cpus, c.Linux.Resources.Cpu.Mems = res.GetCpus(), res.GetMems()
	return res.GetMems(), res.GetCpus(), updates
}

func (h *harness) allocated() []string {
	var keys []string
	for _, a := range h.server.Allocations() {
		keys = append(keys, string(a.PodUID))
	}
	sort.Strings(keys)
	return keys
}

func updated(updates []*api.ContainerUpdate) map[string]string {
	out := map[string]string{}
	for _, u := range updates {
		out[u.GetContainerId()] = u.GetLinux().GetResources().GetCpu().GetCpus()
	}
	return out
}

func TestPlaceFillsANodeThenTheNext(t *testing.T) {
	h := newHarness(t, ModeNRI, "single-numa-node")
	shared := ctr("c-shared", "p0", "web", 500, gi, 0)
	mems, cpus, _ := h.mustCreate(sandbox("p0", "burstable"), shared)
	assert.Equal(t, "", mems, "an unpinned container keeps every node")
	assert.Equal(t, "0-7", cpus, "the shared pool is every pod CPU")

	mems, cpus, updates := h.mustCreate(sandbox("p1", ""), ctr("c-a", "p1", "db", 2000, 6*gi, 512<<20))
	assert.Equal(t, "0", mems)
	assert.Equal(t, "0-1", cpus, "two CPUs: one whole core of node 0")
	assert.Equal(t, map[string]string{"c-shared": "2-7"}, updated(updates), "the shared container leaves the exclusive core")

	mems, cpus, updates = h.mustCreate(sandbox("p2", ""), ctr("c-b", "p2", "db", 2000, 6*gi, 512<<20))
	assert.Equal(t, "1", mems, "node 0 has 3Gi left: the next pod goes to node 1")
	assert.Equal(t, "4-5", cpus)
	assert.Equal(t, map[string]string{"c-shared": "2-3,6-7"}, updated(updates))

	assert.Equal(t, []string{"p0/web", "p1/db", "p2/db"}, h.allocated())
}

func TestPlaceRefusesWithTheReason(t *testing.T) {
	h := newHarness(t, ModeNRI, "single-numa-node")
	_, _, err := h.create(sandbox("big", ""), ctr("c-big", "big", "db", 2000, 12*gi, 0))
	require.Error(t, err)
	for _, want := range []string{"numa-partition node0", "pod ns/pod-big container db", "memory=12Gi", "cpu=2",
		"cannot be placed under topology policy single-numa-node", "TopologyAffinityError",
		// #40: what is asked and free, memory's from the allocator, the CPUs' from the plugin.
		"; policy single-numa-node, scope container; memory: asked 12Gi, free ",
		"; cpu hints: [0] preferred, [1] preferred, [0-1]; cpu: asked 2 exclusive, free 4 on nodes 0-1 (whole cores of 2 CPUs; the shared pool keeps one)"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Empty(t, h.allocated(), "a refused container holds nothing")

	_, _, err = h.create(sandbox("odd", ""), ctr("c-odd", "odd", "db", 1000, gi, 0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SMTAlignmentError: 1 CPUs are not a whole number of cores of 2 CPUs")
}

func TestPlaceKeepsASharedCore(t *testing.T) {
	h := newHarness(t, ModeNRI, "best-effort")
	h.mustCreate(sandbox("p1", ""), ctr("c1", "p1", "a", 4000, gi, 0))
	_, _, err := h.create(sandbox("p2", ""), ctr("c2", "p2", "a", 4000, gi, 0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "would leave no CPU for the partition's shared pool")
	assert.Contains(t, err.Error(), "; cpu: asked 4 exclusive, free 0 on node 0, 4 on node 1 (whole cores of 2 CPUs; the shared pool keeps one)")
	assert.Equal(t, []string{"p1/a"}, h.allocated(), "the refused container's memory is released again")
}

func TestStopReleases(t *testing.T) {
	h := newHarness(t, ModeNRI, "single-numa-node")
	shared := ctr("c-shared", "p0", "web", 500, gi, 0)
	h.mustCreate(sandbox("p0", "burstable"), shared)
	db := ctr("c-a", "p1", "db", 2000, 6*gi, 0)
	h.mustCreate(sandbox("p1", ""), db)
	updates, err := h.plugin.StopContainer(context.Background(), sandbox("p1", ""), db)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"c-shared": "0-7"}, updated(updates), "the freed core is shared again")
	assert.Equal(t, []string{"p0/web"}, h.allocated())
	// The node's memory is free again: a 6Gi container fits on node 0.
	mems, _, _ := h.mustCreate(sandbox("p2", ""), ctr("c-b", "p2", "db", 2000, 6*gi, 0))
	assert.Equal(t, "0", mems)

	require.NoError(t, h.plugin.RemovePodSandbox(context.Background(), sandbox("p0", "burstable")))
	assert.Equal(t, []string{"p2/db"}, h.allocated())
}

// After a kill -9 the daemon restarts on its checkpoint and containerd
// synchronizes: the runtime wins, every difference is logged.
func TestSynchronizeAfterKill(t *testing.T) {
	h := newHarness(t, ModeNRI, "single-numa-node")
	shared := ctr("c-shared", "p0", "web", 500, gi, 0)
	h.mustCreate(sandbox("p0", "burstable"), shared)
	a := ctr("c-a", "p1", "db", 2000, 6*gi, 0)
	h.mustCreate(sandbox("p1", ""), a)
	gone := ctr("c-gone", "p2", "db", 2000, 2*gi, 0)
	h.mustCreate(sandbox("p2", ""), gone)
	require.Equal(t, []string{"p0/web", "p1/db", "p2/db"}, h.allocated())

	h.restart()
	// While the daemon was down: p2 stopped, p3 started (placed by hand on
	// node 1, CPUs 6-7).
	late := ctr("c-late", "p3", "db", 2000, 3*gi, 0)
	late.Linux.Resources.Cpu.Cpus, late.Linux.Resources.Cpu.Mems = "6-7", "1"
	for _, c := range []*api.Container{shared, a, late} {
		c.State = api.ContainerState_CONTAINER_RUNNING
	}
	updates, err := h.plugin.Synchronize(context.Background(),
		[]*api.PodSandbox{sandbox("p0", "burstable"), sandbox("p1", ""), sandbox("p3", "")}, []*api.Container{shared, a, late})
	require.NoError(t, err)
	assert.Equal(t, []string{"p0/web", "p1/db", "p3/db"}, h.allocated(), "the state is the running containers")
	assert.Equal(t, "0-1,6-7", h.plugin.pool.taken().String(), "exclusive CPUs as the containers run")
	assert.Equal(t, map[string]string{"c-shared": "2-5"}, updated(updates))
	logs := h.logs.String()
	assert.Contains(t, logs, "allocation released: its container no longer runs")
	assert.Contains(t, logs, "running container adopted where it runs")
	for _, d := range h.server.Allocations() {
		if d.PodUID == types.UID("p3/db") {
			assert.Equal(t, "1", d.Containers[0].NUMANodes.String(), "adopted on the node it runs on")
		}
	}
}

// kubelet mode: kubelet decides, the plugin mirrors and reports.
func TestMirrorReportsADifferentChoice(t *testing.T) {
	h := newHarness(t, ModeKubelet, "single-numa-node")
	c := ctr("c-k", "pk", "db", 2000, 2*gi, 0)
	c.Linux.Resources.Cpu.Cpus, c.Linux.Resources.Cpu.Mems = "4-5", "1"
	adj, updates, err := h.create(sandbox("pk", ""), c)
	require.NoError(t, err)
	assert.Nil(t, adj, "kubelet mode changes nothing")
	assert.Nil(t, updates)
	allocs := h.server.Allocations()
	require.Len(t, allocs, 1)
	assert.Equal(t, "1", allocs[0].Containers[0].NUMANodes.String(), "the mirror holds kubelet's node")
	assert.Contains(t, h.logs.String(), "kubelet placed a container other than the allocator's policy would")
	assert.Equal(t, "4-5", h.plugin.pool.taken().String())
	cp, err := daemon.ReadCheckpoint(h.dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), cp.Generation, "one change, one durable write: the own decision is only evaluated")
}

func TestRequestFromNRI(t *testing.T) {
	c, err := fromNRI(sandbox("u", "burstable"), ctr("id", "u", "app", 250, gi, 4<<20))
	require.NoError(t, err)
	assert.Equal(t, int64(250), c.CPURequestMilli)
	assert.Equal(t, int64(250), c.CPULimitMilli)
	assert.Equal(t, "Burstable", string(c.QoS))
	assert.Equal(t, int64(4<<20), c.Hugepages["hugepages-2Mi"])
	assert.Zero(t, c.exclusiveCPUs())
	for shares, milli := range map[uint64]int64{2: 0, 102: 100, 1024: 1000, 2048: 2000, 256: 250} {
		assert.Equal(t, milli, sharesToMilli(shares), "%d shares", shares)
	}
	for s, b := range map[string]uint64{"2MB": 2 << 20, "1GB": 1 << 30, "64KB": 64 << 10} {
		got, err := pageSizeBytes(s)
		require.NoError(t, err)
		assert.Equal(t, b, got)
	}
	for _, bad := range []string{"2M", "MB", "0MB", "-1GB"} {
		_, err := pageSizeBytes(bad)
		assert.Error(t, err, bad)
	}
	// kubelet drops the CFS quota of containers with exclusive CPUs: a
	// Guaranteed container's limit is then its request.
	noQuota := ctr("id", "u", "app", 2000, gi, 0)
	noQuota.Linux.Resources.Cpu.Quota = nil
	c, err = fromNRI(sandbox("u", ""), noQuota)
	require.NoError(t, err)
	assert.Equal(t, 2, c.exclusiveCPUs())

	bad := ctr("id", "u", "app", 0, 0, 0)
	bad.Linux.Resources.HugepageLimits = []*api.HugepageLimit{{PageSize: "huge", Limit: 1}}
	_, err = fromNRI(sandbox("u", ""), bad)
	assert.ErrorContains(t, err, `page size "huge"`)
	_, err = fromNRI(&api.PodSandbox{Name: "x"}, bad)
	assert.ErrorContains(t, err, "the pod has no uid")
	assert.True(t, strings.HasPrefix(string(qosOf("/node0/kubepods/besteffort/podx")), "BestEffort"))
}

// Beyond 8 nodes the CPU hints are each node grown by its nearest
// neighbours until their free cores suffice.
func TestCPUHintsBeyondEightNodes(t *testing.T) {
	topo, _ := wideMachine(12, "restricted") // 2 cores of 2 threads per node, a ring
	pool, err := newCPUPool(topo)
	require.NoError(t, err)
	h, err := pool.hints(4) // one node's two cores
	require.NoError(t, err)
	require.Len(t, h["cpu"], 12)
	for _, hint := range h["cpu"] {
		assert.Equal(t, 1, hint.Affinity.Len())
		assert.True(t, hint.Preferred)
	}
	_, err = pool.take("busy", 4, bitmask.NewNodeSet(1))
	require.NoError(t, err)
	h, err = pool.hints(8) // two nodes' cores: node 1's are taken
	require.NoError(t, err)
	var got []string
	for _, hint := range h["cpu"] {
		got = append(got, hint.Affinity.String())
		assert.Equal(t, hint.Affinity.Len() == 2, hint.Preferred, hint.Affinity.String())
	}
	assert.Contains(t, got, "2-3", "node 2 grows to its neighbour 3 (1 is full)")
	assert.Contains(t, got, "0,11", "node 0 grows to 11 on the ring (1 is full)")
	assert.Contains(t, got, "0,2", "from node 1 the nearest nodes with free cores")
	for _, m := range got {
		assert.False(t, bitmask.MustParseNodeList(m).Has(1), "%s counts node 1's taken cores", m)
	}
}

// A Guaranteed container that runs unplaced (created while the allocator
// was down, so with no cpuset.mems) is placed at the synchronization and
// moved there: its memory is charged, it gets its exclusive core.
func TestSynchronizePlacesAnUnplacedContainer(t *testing.T) {
	h := newHarness(t, ModeNRI, "single-numa-node")
	shared := ctr("c-shared", "p0", "web", 500, gi, 0)
	shared.State = api.ContainerState_CONTAINER_RUNNING
	loose := ctr("c-loose", "p1", "db", 2000, 6*gi, 0)
	loose.Linux.Resources.Cpu.Cpus = "0-7"
	loose.State = api.ContainerState_CONTAINER_RUNNING
	updates, err := h.plugin.Synchronize(context.Background(),
		[]*api.PodSandbox{sandbox("p0", "burstable"), sandbox("p1", "")}, []*api.Container{shared, loose})
	require.NoError(t, err)
	var got *api.ContainerUpdate
	for _, u := range updates {
		if u.GetContainerId() == "c-loose" {
			got = u
		}
	}
	require.NotNil(t, got, "no update for the unplaced container: %v", updated(updates))
	assert.Equal(t, "0", got.GetLinux().GetResources().GetCpu().GetMems())
	assert.Equal(t, "0-1", got.GetLinux().GetResources().GetCpu().GetCpus())
	assert.Equal(t, "2-7", updated(updates)["c-shared"], "the shared container leaves the core")
	allocs := h.server.Allocations()
	require.Len(t, allocs, 2)
	assert.Equal(t, "p1/db", string(allocs[1].PodUID))
	assert.Equal(t, uint64(6*gi), allocs[1].Containers[0].Memory["memory"], "its memory is charged")
	assert.Contains(t, h.logs.String(), "placed now")
}

// Repro (#24): NRI passes cgroup values as they are, and the plugin's
// arithmetic wrapped them: a quota of 2^62 µs gave a negative CPU limit
// (quota × 1000 past int64), 2^63 cpu.shares a negative request, and a
// hugepage limit of 2^64-1 bytes became -1 (uint64 to int64). Each is now
// computed without wrapping and refused by the allocator's one gate
// (allocator.CheckPod), naming the container and the field.
func TestRequestFromNRIRefusesWhatWraps(t *testing.T) {
	quota := ctr("id", "u", "app", 1000, gi, 0)
	quota.Linux.Resources.Cpu.Quota = api.Int64(1 << 62)
	shares := ctr("id", "u", "app", 0, 0, 0)
	shares.Linux.Resources.Cpu.Shares = api.UInt64(uint64(1) << 63)
	huge := ctr("id", "u", "app", 1000, gi, 0)
	huge.Linux.Resources.HugepageLimits = []*api.HugepageLimit{{PageSize: "2MB", Limit: math.MaxUint64}}
	for _, c := range []struct {
		name string
		qos  string
		ctr  *api.Container
		want string
	}{
		{"quota", "", quota, "limits.cpu: 46116860184273879m CPUs: at most 65536"},
		{"shares", "burstable", shares, "requests.cpu: 9007199254740992 CPUs: at most 65536"},
		{"hugepages", "", huge, "limits.hugepages-2Mi: 9223372036854775807 bytes: at most"},
	} {
		_, err := fromNRI(sandbox("u", c.qos), c.ctr)
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), "container app of pod ns/pod-u", c.name)
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
	assert.Equal(t, int64(math.MaxInt64), scale(math.MaxUint64, 1000, 0, 1), "saturates")
	assert.Equal(t, int64(1500), scale(150000, 1000, 0, 100000))
	assert.Equal(t, int64(46116860184273879), scale(1<<62, 1000, 0, 100000), "exact in 128 bits")
}

// FuzzFromNRI: whatever cgroup values NRI passes, a container fromNRI
// accepts has no negative or wrapped quantity, at most MaxCPUs exclusive
// CPUs, and a pod the allocator's gate accepts.
func FuzzFromNRI(f *testing.F) {
	f.Add(int64(200000), uint64(100000), uint64(2048), int64(gi), uint64(4<<20), "")
	f.Add(int64(1<<62), uint64(100000), uint64(1024), int64(gi), uint64(0), "")
	f.Add(int64(1000), uint64(1), uint64(1)<<63, int64(0), uint64(math.MaxUint64), "burstable")
	f.Add(int64(-1), uint64(0), uint64(0), int64(-1), uint64(1), "besteffort")
	f.Fuzz(func(t *testing.T, quota int64, period, shares uint64, memory int64, hugepages uint64, qos string) {
		c := ctr("id", "u", "app", 0, 0, 0)
		res := c.Linux.Resources
		res.Cpu.Quota, res.Cpu.Period, res.Cpu.Shares = api.Int64(quota), api.UInt64(period), api.UInt64(shares)
		res.Memory.Limit = api.Int64(memory)
		res.HugepageLimits = []*api.HugepageLimit{{PageSize: "2MB", Limit: hugepages}}
		got, err := fromNRI(sandbox("u", qos), c)
		if err != nil {
			return
		}
		if got.CPURequestMilli < 0 || got.CPULimitMilli < 0 || got.MemoryLimit < 0 || got.Hugepages["hugepages-2Mi"] < 0 {
			t.Fatalf("a negative quantity: %+v", got)
		}
		if n := got.exclusiveCPUs(); n < 0 || n > bitmask.MaxCPUs {
			t.Fatalf("%d exclusive CPUs", n)
		}
		if err := allocator.CheckPod(got.pod()); err != nil {
			t.Fatalf("accepted a container whose pod the gate refuses: %v", err)
		}
	})
}

// Every event the plugin answers is timed once, under its own name (a
// remove is not also counted as a stop), and the daemon exports the
// times as nri_event_duration_seconds: what the plugin adds to
// containerd's calls (#28).
func TestEventsAreTimed(t *testing.T) {
	h := newHarness(t, ModeNRI, "single-numa-node")
	seen := map[string]int{}
	h.plugin.opts.ObserveEvent = func(event string, took time.Duration) {
		seen[event]++
		h.server.ObserveNRIEvent(event, took)
		assert.GreaterOrEqual(t, took, time.Duration(0), event)
	}
	ctx := context.Background()
	_, err := h.plugin.Synchronize(ctx, nil, nil)
	require.NoError(t, err)
	pod, c := sandbox("a", ""), ctr("c-a", "a", "app", 2000, gi, 0)
	h.mustCreate(pod, c)
	_, err = h.plugin.StopContainer(ctx, pod, c)
	require.NoError(t, err)
	require.NoError(t, h.plugin.RemoveContainer(ctx, pod, c))
	require.NoError(t, h.plugin.StopPodSandbox(ctx, pod))
	require.NoError(t, h.plugin.RemovePodSandbox(ctx, pod))
	assert.Equal(t, map[string]int{EventSynchronize: 1, EventCreateContainer: 1, EventStopContainer: 1,
		EventRemoveContainer: 1, EventStopPodSandbox: 1, EventRemovePodSandbox: 1}, seen)

	rec := httptest.NewRecorder()
	h.server.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for event := range seen {
		line := `numa_partition_allocator_nri_event_duration_seconds_count{event="` + event + `",partition="node0"} 1`
		assert.True(t, strings.Contains(rec.Body.String(), line+"\n"), "/metrics has no %s", line)
	}
}
