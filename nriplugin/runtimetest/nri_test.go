package runtimetest

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/numa-partition/numa-partition/nriplugin"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// exclusive are the resources of a Guaranteed container with one whole
// core of CPUs (integer CPUs, requests = limits).
func (m machine) exclusive() resources {
	milli := int64(m.threads) * 1000
	return resources{cpuRequestMilli: milli, cpuLimitMilli: milli, memoryLimit: 64 * mi}
}

// sharedRes are a Burstable container's: requests below limits.
var sharedRes = resources{cpuRequestMilli: 250, cpuLimitMilli: 500, memoryLimit: 64 * mi}

func (m machine) node0() bitmask.NodeSet { return bitmask.NewNodeSet(m.nodes[0]) }

// assertPinned checks an allocation: pinned on nodes with memory bytes of
// memory.
func assertPinned(t *testing.T, a allocator.Allocation, nodes bitmask.NodeSet, memory int64) {
	t.Helper()
	require.True(t, a.Admitted, "%s admitted", a.PodUID)
	require.True(t, a.Pinned, "%s pinned (Guaranteed)", a.PodUID)
	require.Len(t, a.Containers, 1)
	assert.Equal(t, nodes, a.Containers[0].NUMANodes, "%s: NUMA nodes", a.PodUID)
	assert.Equal(t, uint64(memory), a.Containers[0].Memory[allocator.ResourceMemory], "%s: memory", a.PodUID)
}

// In nri mode the allocator decides and containerd enforces: Burstable and
// BestEffort containers run on the shared pool, a Guaranteed one with
// integer CPUs on a whole core of its own on the node its memory is
// pinned to; the shared containers leave that core, and get it back when
// the exclusive container goes. A container is released when it is
// stopped, when it dies, and when its pod is removed.
func TestNRIPlacesAndReleasesRealContainers(t *testing.T) {
	e := newEnv(t)
	m := e.m
	a := e.startAllocator(nriplugin.ModeNRI, "single-numa-node")
	rest := m.all.Difference(m.first)

	web := e.runPod("web", burstable)
	shared := e.run(web, "app", sharedRes)
	cpus, mems := e.specCpuset(shared)
	assert.Equal(t, m.all.String(), cpus, "the plugin set the shared pool, every pod CPU, in the Burstable container's spec")
	assert.Equal(t, "", mems, "a Burstable container's memory is not pinned")
	s := e.waitCPUs(shared, m.all, "the shared pool")
	assert.Equal(t, m.mems, s.procMems)
	line, err := e.workloadLine(shared)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("cpus=%s mems=%s", m.all, m.mems), line, "what the Burstable workload saw when it started")
	got := a.waitAllocations("the Burstable container admitted", shared.key())
	assert.True(t, got[shared.key()].Admitted)
	assert.False(t, got[shared.key()].Pinned, "a Burstable container pins nothing")

	batch := e.runPod("batch", besteffort)
	job := e.run(batch, "job", resources{})
	e.waitCPUs(job, m.all, "a BestEffort container shares too")

	db := e.runPod("db", guaranteed)
	excl := e.run(db, "db", m.exclusive())
	cpus, mems = e.specCpuset(excl)
	assert.Equal(t, m.first.String(), cpus, "the exclusive core in the Guaranteed container's spec")
	assert.Equal(t, m.node0().String(), mems, "the Guaranteed container's memory pinned to node %d in its spec", m.nodes[0])
	s = e.waitCPUs(excl, m.first, "its exclusive core")
	assert.Equal(t, m.node0(), s.procMems, "Mems_allowed_list of the Guaranteed container")
	assert.Equal(t, m.node0(), s.cgroupMems, "cpuset.mems of the Guaranteed container")
	line, err = e.workloadLine(excl)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("cpus=%s mems=%s", m.first, m.node0()), line, "what the Guaranteed workload saw when it started")
	e.waitCPUs(shared, rest, "the shared container leaves the exclusive core")
	e.waitCPUs(job, rest, "the BestEffort container leaves the exclusive core")
	got = a.waitAllocations("the three containers allocated", shared.key(), job.key(), excl.key())
	assertPinned(t, got[excl.key()], m.node0(), 64*mi)

	// Release: a stopped container holds nothing; its core is shared again.
	e.stop(excl)
	a.waitAllocations("the stopped Guaranteed container released", shared.key(), job.key())
	e.waitCPUs(shared, m.all, "the exclusive core back in the shared pool")
	e.waitCPUs(job, m.all, "the exclusive core back in the shared pool")
	e.remove(excl)
	e.removePod(db)
	a.waitAllocations("nothing of the removed pod", shared.key(), job.key())
	e.stop(job)
	e.remove(job)
	e.removePod(batch)

	// The core really is free: the next Guaranteed container gets it.
	db2 := e.runPod("db2", guaranteed)
	excl2 := e.run(db2, "db", m.exclusive())
	e.waitCPUs(excl2, m.first, "the released core")
	e.waitCPUs(shared, rest, "the shared container leaves the core again")
	got = a.waitAllocations("the new Guaranteed container allocated", shared.key(), excl2.key())
	assertPinned(t, got[excl2.key()], m.node0(), 64*mi)

	// A container that dies on its own (a crash, the OOM killer) is
	// released too: containerd tells the plugin when its task exits.
	require.NoError(t, syscall.Kill(e.info(excl2).Pid, syscall.SIGKILL))
	a.waitAllocations("the dead Guaranteed container released", shared.key())
	e.waitCPUs(shared, m.all, "the dead container's core back in the shared pool")

	// A pod removed without its container being stopped first.
	e.removePod(web)
	a.waitAllocations("the removed pod's container released")
}

// reason is kubelet's reason for a container with more memory than any
// node: with one node no node set holds it (the Memory Manager has no
// hint and its Allocate fails); with more, only sets of several nodes
// do, which single-numa-node refuses.
func reason(m machine) string {
	if len(m.nodes) == 1 {
		return "UnexpectedAdmissionError: Allocate failed due to [memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available"
	}
	return "TopologyAffinityError"
}

// A container the policy cannot place is not created: containerd's
// CreateContainer fails with the allocator's reason, which names the pod,
// the container, its resources and the policy; nothing is allocated for
// it, and a container of the same pod that fits is created.
func TestNRIRefusesAContainerThatCannotBePlaced(t *testing.T) {
	e := newEnv(t)
	m := e.m
	a := e.startAllocator(nriplugin.ModeNRI, "single-numa-node")
	big := m.exclusive()
	big.memoryLimit = 5 * gi // no node has 5Gi (nodeMemory)
	p := e.runPod("huge", guaranteed)
	_, err := e.create(p, "db", big)
	require.Error(t, err, "a container with more memory than any node must not be created under single-numa-node")
	msg := err.Error()
	t.Logf("CreateContainer: %s", msg)
	for _, want := range []string{
		"numa-partition " + partitionName + ": pod rt/huge container db",
		fmt.Sprintf("cpu=%d", m.threads), "memory=5Gi",
		"cannot be placed under topology policy single-numa-node (scope container)",
		reason(m),
	} {
		assert.Contains(t, msg, want)
	}
	l, err := e.rt.ListContainers(e.ctx(), &cri.ListContainersRequest{})
	require.NoError(t, err)
	for _, c := range l.GetContainers() {
		assert.NotEqual(t, "db", c.GetMetadata().GetName(), "the refused container exists: %v", c)
	}
	a.waitAllocations("nothing allocated for the refused container")
	assert.Regexp(t, `msg="pod rejected" .*uid=`+p.uid+`/db reason=`, a.logText())

	fits := e.run(p, "db", m.exclusive())
	e.waitCPUs(fits, m.first, "a container that fits is placed")
	assertPinned(t, a.waitAllocations("the container that fits", fits.key())[fits.key()], m.node0(), 64*mi)
}

// After a kill -9 of the allocator while containers run, the restarted
// allocator's state is the running containers: the one removed while it
// was down is released, the ones created while it was down (unplaced)
// are adopted and moved to the shared pool (a Burstable one) or placed
// now with their memory charged (a Guaranteed one), the exclusive one
// keeps its core and its pinned memory.
func TestNRIResynchronizesAfterKill9(t *testing.T) {
	e := newEnv(t)
	m := e.m
	a := e.startAllocator(nriplugin.ModeNRI, "single-numa-node")
	rest := m.all.Difference(m.first)

	excl, gone, web := e.exclusiveAndShared(a)

	a.kill9()
	// While the allocator is down: a pod goes away, another comes.
	e.stop(gone)
	e.remove(gone)
	e.removePod(web)
	late := e.runPod("late", burstable)
	unplaced := e.run(late, "app", sharedRes)
	cpus, _ := e.specCpuset(unplaced)
	require.Equal(t, "", cpus, "with the allocator down, nothing places the container")
	e.waitCPUs(unplaced, m.all, "unplaced: every CPU, the exclusive core too")
	lone := e.runPod("lone", guaranteed)
	loose := e.run(lone, "app", resources{cpuRequestMilli: 500, cpuLimitMilli: 500, memoryLimit: 48 * mi})
	_, mems := e.specCpuset(loose)
	require.Equal(t, "", mems, "with the allocator down, nothing pins the Guaranteed container's memory")

	a = e.startAllocator(nriplugin.ModeNRI, "single-numa-node")
	got := a.waitAllocations("after the restart: the running containers", excl.key(), unplaced.key(), loose.key())
	assertPinned(t, got[excl.key()], m.node0(), 64*mi)
	assert.False(t, got[unplaced.key()].Pinned)
	assertPinned(t, got[loose.key()], m.node0(), 48*mi)
	e.waitCPUs(loose, rest, "the Guaranteed container placed now, on the shared pool (a fractional CPU)")
	e.waitCPUs(unplaced, rest, "the adopted container moved to the shared pool")
	e.waitCPUs(excl, m.first, "the exclusive container keeps its core")
	log := a.logText()
	for _, want := range []string{
		"allocation released: its container no longer runs", gone.key(),
		"running container adopted where it runs", "synchronized with the runtime",
		"container ran unplaced (created while the allocator was down); placed now",
	} {
		assert.Contains(t, log, want)
	}

	// The restarted plugin tracks both: the exclusive core is freed on stop.
	e.stop(excl)
	a.waitAllocations("the exclusive container released", unplaced.key(), loose.key())
	e.waitCPUs(unplaced, m.all, "the exclusive core back in the shared pool")
}

// With the partition's containerd requiring the allocator's plugin (nri
// mode's config), a container created while the allocator is down is
// refused, naming the plugin, instead of starting unplaced; once the
// allocator is back the same request creates it, placed. containerd
// notices a dead plugin on the first NRI event after its death (a new
// pod's sandbox here, as kubelet creates one before its containers): a
// container created by that very event is not refused
// (containerd/nri#316) and the restarted allocator adopts it
// (TestNRIResynchronizesAfterKill9).
func TestNRIRequiredPluginRefusesContainersWhileTheAllocatorIsDown(t *testing.T) {
	e := newEnvRequiringPlugin(t)
	m := e.m
	a := e.startAllocator(nriplugin.ModeNRI, "single-numa-node")
	before := e.run(e.runPod("early", guaranteed), "first", m.exclusive())
	e.waitCPUs(before, m.first, "placed while the allocator runs")

	a.kill9()
	p := e.runPod("late", guaranteed)
	_, err := e.create(p, "app", m.exclusive())
	require.Error(t, err, "with the allocator down, containerd must not create the container")
	t.Logf("CreateContainer: %s", err)
	assert.Contains(t, err.Error(), `required plugin "`+pluginName+`" not present`)
	l, err := e.rt.ListContainers(e.ctx(), &cri.ListContainersRequest{})
	require.NoError(t, err)
	for _, c := range l.GetContainers() {
		assert.NotEqual(t, "app", c.GetMetadata().GetName(), "the refused container exists: %v", c)
	}

	a = e.startAllocator(nriplugin.ModeNRI, "single-numa-node")
	a.waitAllocations("after the restart: the running container", before.key())
	e.stop(before)
	e.remove(before)
	a.waitAllocations("the first container released")
	after := e.run(p, "app", m.exclusive())
	e.waitCPUs(after, m.first, "created once the allocator is back, placed")
	assertPinned(t, a.waitAllocations("the retried container", after.key())[after.key()], m.node0(), 64*mi)
}

// In kubelet mode kubelet's managers decide (here: the cpuset of the
// CRI request, as its CPU and Memory Managers set it); the plugin changes
// nothing and records the nodes the container was created on, and one it
// would have refused still runs, logged.
func TestKubeletModeMirrorsTheCpuset(t *testing.T) {
	e := newEnv(t)
	m := e.m
	a := e.startAllocator(nriplugin.ModeKubelet, "single-numa-node")
	last := m.cpus.Cores[len(m.cpus.Cores)-1]
	kubeletExcl := m.exclusive()
	kubeletExcl.cpusetCpus, kubeletExcl.cpusetMems = last.CPUs.String(), bitmask.NewNodeSet(last.Node).String()

	db := e.runPod("db", guaranteed)
	excl := e.run(db, "db", kubeletExcl)
	cpus, mems := e.specCpuset(excl)
	assert.Equal(t, kubeletExcl.cpusetCpus, cpus, "kubelet's cpuset, unchanged")
	assert.Equal(t, kubeletExcl.cpusetMems, mems)
	s := e.waitCPUs(excl, last.CPUs, "kubelet's exclusive core")
	assert.Equal(t, bitmask.NewNodeSet(last.Node), s.procMems)
	got := a.waitAllocations("the mirrored container", excl.key())
	assertPinned(t, got[excl.key()], bitmask.NewNodeSet(last.Node), 64*mi)

	web := e.runPod("web", burstable)
	kubeletShared := sharedRes
	kubeletShared.cpusetCpus = m.all.Difference(last.CPUs).String()
	shared := e.run(web, "app", kubeletShared)
	e.waitCPUs(shared, m.all.Difference(last.CPUs), "kubelet's shared pool")
	cpus, mems = e.specCpuset(shared)
	assert.Equal(t, kubeletShared.cpusetCpus, cpus)
	assert.Equal(t, "", mems)
	a.waitAllocations("both mirrored", excl.key(), shared.key())

	big := resources{cpuRequestMilli: 100, cpuLimitMilli: 100, memoryLimit: 5 * gi, cpusetMems: bitmask.NewNodeSet(m.nodes[0]).String()}
	huge := e.runPod("huge", guaranteed)
	e.run(huge, "db", big) // kubelet decided: it runs
	a.waitAllocations("the container that does not fit the allocator's state is not mirrored", excl.key(), shared.key())
	log := a.logText()
	assert.Contains(t, log, "kubelet placed a container the allocator's policy would refuse")
	assert.Contains(t, log, "not mirrored")

	e.stop(excl)
	a.waitAllocations("the stopped container released", shared.key())
	assert.Equal(t, 1, strings.Count(a.logText(), "synchronized with the runtime"))
}

// After a restart of containerd (the containers keep running in their
// shims) the plugin reconnects and synchronizes again: a container that
// died while containerd was down is released, the exclusive one keeps
// its core (a new shared container does not get it).
func TestNRIResynchronizesAfterContainerdRestart(t *testing.T) {
	e := newEnv(t)
	m := e.m
	a := e.startAllocator(nriplugin.ModeNRI, "single-numa-node")
	rest := m.all.Difference(m.first)

	excl, dies, web := e.exclusiveAndShared(a)
	pid := e.info(dies).Pid

	e.stopContainerd()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL), "the shared container dies while containerd is down")
	e.startContainerd()
	a.waitSynced()
	a.waitAllocations("after containerd's restart: the running containers", excl.key())
	e.waitCPUs(excl, m.first, "the exclusive container keeps its core")

	late := e.run(web, "late", sharedRes)
	e.waitCPUs(late, rest, "a new shared container: the shared pool, without the exclusive core")
	a.waitAllocations("the new container allocated", excl.key(), late.key())
	assert.Equal(t, 2, strings.Count(a.logText(), "synchronized with the runtime"), "synchronized at start and after containerd's restart")
}

// exclusiveAndShared runs, in nri mode, a Guaranteed container on an
// exclusive core (pod db) and a Burstable one on the rest (pod web), and
// waits until the allocator holds both.
func (e *env) exclusiveAndShared(a *allocatorProc) (excl, shared *ctr, sharedPod *pod) {
	e.t.Helper()
	db := e.runPod("db", guaranteed)
	excl = e.run(db, "db", e.m.exclusive())
	sharedPod = e.runPod("web", burstable)
	shared = e.run(sharedPod, "app", sharedRes)
	e.waitCPUs(shared, e.m.all.Difference(e.m.first), "the shared pool")
	a.waitAllocations("both containers allocated", excl.key(), shared.key())
	return excl, shared, sharedPod
}
