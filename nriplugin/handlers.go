package nriplugin

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/containerd/nri/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// Synchronize makes the allocator's state the runtime's, on every
// (re)connection: allocations of containers that no longer run are
// released, running containers the state lacks (or holds elsewhere) are
// adopted where they run, each difference logged. Pods placed as one unit
// keep their allocation while their sandbox exists. Shared containers get
// the current shared pool.
//
// In steps: what runs (whatRuns), the allocations nothing runs in
// released (releaseGone), then the plugin's own view made anew from the
// runtime's (syncRunning for each container, syncUnit for each pod placed
// as one unit), and last the Guaranteed containers that run unplaced
// (placeRunning), once every placed container's CPUs are held.
func (p *Plugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	defer p.observe(EventSynchronize, time.Now())
	p.mu.Lock()
	defer p.mu.Unlock()
	running, unitPods := p.whatRuns(pods, ctrs)
	known, err := p.releaseGone(running, unitPods)
	if err != nil {
		return nil, err
	}
	p.containers = map[string]*tracked{}
	p.units = map[types.UID]*unit{}
	p.pool.clear()
	var unplaced []container
	for _, key := range sortedKeys(running) {
		c := running[key]
		later, err := p.syncRunning(key, c, known)
		if err != nil {
			return nil, err
		}
		if later {
			unplaced = append(unplaced, c)
		}
	}
	for _, uid := range sortedKeys(unitPods) {
		if err := p.syncUnit(uid, unitPods[uid], known); err != nil {
			return nil, err
		}
	}
	updates := p.placeRunning(unplaced)
	p.log.Info("synchronized with the runtime", "containers", len(p.containers), "units", len(p.units),
		"exclusive", p.pool.taken(), "shared", p.pool.shared())
	if p.opts.OnSynchronized != nil {
		p.opts.OnSynchronized()
	}
	return append(updates, p.sharedUpdates()...), nil
}

// whatRuns sorts the runtime's containers that are not stopped: those of
// pods placed as one unit under their pod's UID (every such pod is there,
// even with none of its containers running, since its allocation holds
// while its sandbox exists), the others under their own key. A container
// of a sandbox the runtime did not list, or that cannot be read, is left
// alone, with a warning.
func (p *Plugin) whatRuns(pods []*api.PodSandbox, ctrs []*api.Container) (running map[types.UID]container, unitPods map[types.UID][]container) {
	sandboxes := map[string]*api.PodSandbox{}
	unitPods = map[types.UID][]container{}
	for _, pod := range pods {
		sandboxes[pod.GetId()] = pod
		if p.asUnitPod(pod.GetLabels(), qosOf(pod.GetLinux().GetCgroupParent())) && pod.GetUid() != "" {
			unitPods[types.UID(pod.GetUid())] = nil
		}
	}
	running = map[types.UID]container{}
	for _, ctr := range ctrs {
		if ctr.GetState() == api.ContainerState_CONTAINER_STOPPED {
			continue
		}
		pod := sandboxes[ctr.GetPodSandboxId()]
		if pod == nil {
			p.log.Warn("container of an unknown pod sandbox left alone", "container", ctr.GetId(), "sandbox", ctr.GetPodSandboxId())
			continue
		}
		c, err := fromNRI(pod, ctr)
		if err != nil {
			p.log.Warn("container left alone", "err", err)
			continue
		}
		if _, ok := unitPods[c.PodUID]; ok {
			unitPods[c.PodUID] = append(unitPods[c.PodUID], c)
			continue
		}
		running[c.key()] = c
	}
	return running, unitPods
}

// releaseGone releases each allocation that is neither a running
// container's nor that of a pod placed as one unit whose sandbox is still
// there, and returns the others by their key, for the running containers
// and those pods to be checked against.
func (p *Plugin) releaseGone(running map[types.UID]container, unitPods map[types.UID][]container) (map[types.UID]allocator.Allocation, error) {
	known := map[types.UID]allocator.Allocation{}
	for _, a := range p.placer.Allocations() {
		_, runs := running[a.PodUID]
		_, unit := unitPods[a.PodUID]
		if runs || unit {
			known[a.PodUID] = a
			continue
		}
		p.log.Warn("allocation released: its container no longer runs", "allocation", a.PodUID, "pod", a.Pod)
		if _, err := p.placer.ReleasePod(a.PodUID); err != nil {
			return nil, fmt.Errorf("releasing %s: %w", a.PodUID, err)
		}
	}
	return known, nil
}

// syncRunning tracks running container c (under key) where it runs: its
// allocation is kept when it agrees with that; otherwise (none, or one
// released since it differs: the runtime is what the container really
// has) c is adopted there. A Guaranteed container of nri mode that runs
// unplaced is reported instead, not tracked: it is placed once every
// placed container's CPUs are held.
func (p *Plugin) syncRunning(key types.UID, c container, known map[types.UID]allocator.Allocation) (unplaced bool, err error) {
	t := &tracked{c: c}
	where := runsOn(c)
	a, ok := known[key]
	if ok && !agrees(a, where) {
		p.log.Warn("allocation differs from where the container runs; the runtime wins", "container", c.Name, "pod", c.Pod,
			"allocated", nodesOf(a), "runs", where)
		if _, err := p.placer.ReleasePod(key); err != nil {
			return false, fmt.Errorf("releasing %s: %w", key, err)
		}
		ok = false
	}
	if !ok && p.opts.Mode == ModeNRI && where.IsEmpty() && c.QoS == corev1.PodQOSGuaranteed {
		// Created while nobody placed containers (no cpuset.mems):
		// placed now, after every placed container's CPUs are held.
		return true, nil
	}
	if !ok {
		p.adoptRunning(c, where)
	}
	p.holdExclusive(c, c.ID)
	p.containers[c.ID] = t
	return false, nil
}

// adoptRunning accounts for container c where it runs; one the allocator
// cannot account for keeps running, its memory out of the state, with an
// error in the log.
func (p *Plugin) adoptRunning(c container, where bitmask.NodeSet) {
	d, err := p.placer.AdoptPod(c.pod(), placement(c.Name, where))
	if err != nil {
		p.log.Error("container runs where the allocator cannot account for it; its memory is not in the state", "container", c.Name, "pod", c.Pod, "err", err)
	} else {
		p.log.Info("running container adopted where it runs", "container", c.Name, "pod", c.Pod, "nodes", nodesOf(d))
	}
}

// placeRunning places Guaranteed containers that run unplaced (nri mode)
// as if they were being created, and moves them there with container
// updates; one that cannot be placed keeps running on the shared pool,
// unaccounted, with an error in the log.
func (p *Plugin) placeRunning(ctrs []container) []*api.ContainerUpdate {
	var out []*api.ContainerUpdate
	for _, c := range ctrs {
		adj, updates, err := p.place(c)
		if err != nil {
			p.log.Error("container runs unplaced and cannot be placed now; its memory is not in the state and it runs on the shared pool",
				"container", c.Name, "pod", c.Pod, "err", err)
			p.containers[c.ID] = &tracked{c: c}
			continue
		}
		u := &api.ContainerUpdate{}
		u.SetContainerId(c.ID)
		cpu := adj.GetLinux().GetResources().GetCpu()
		if cpu.GetMems() != "" {
			u.SetLinuxCPUSetMems(cpu.GetMems())
		}
		u.SetLinuxCPUSetCPUs(cpu.GetCpus())
		p.containers[c.ID].c.CPUs, p.containers[c.ID].c.Mems = cpu.GetCpus(), cpu.GetMems()
		p.log.Warn("container ran unplaced (created while the allocator was down); placed now", "container", c.Name, "pod", c.Pod,
			"nodes", cpu.GetMems(), "cpus", cpu.GetCpus())
		out = append(out, u)
		out = append(out, updates...)
	}
	return out
}

func sortedKeys[V any](m map[types.UID]V) []types.UID {
	keys := make([]types.UID, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// CreateContainer admits a container before it starts.
func (p *Plugin) CreateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	defer p.observe(EventCreateContainer, time.Now())
	c, err := fromNRI(pod, ctr)
	if err != nil {
		return nil, nil, fmt.Errorf("numa-partition %s: %w", p.opts.Partition, err)
	}
	// The first container of a pod placed as one unit needs the pod's
	// spec. It is read before the lock, but containerd hands the plugin
	// one event at a time, so a wait here holds up the partition's other
	// container events all the same: the cache waits at most
	// kubeapi.DefaultPodWait for a pod it has not seen yet.
	var spec *corev1.Pod
	if p.opts.Mode == ModeNRI && p.asUnit(c) && !p.hasUnit(c.PodUID) {
		if spec, err = p.readPod(ctx, c); err != nil {
			return nil, nil, fmt.Errorf("numa-partition %s: pod %s container %s: placing the pod as one unit needs its spec: %w",
				p.opts.Partition, c.Pod, c.Name, err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// A container of the same pod and name whose stop was missed.
	if _, err := p.forgetKey(c.key()); err != nil {
		return nil, nil, err
	}
	if p.opts.Mode == ModeKubelet {
		return nil, nil, p.mirror(c)
	}
	if p.asUnit(c) {
		return p.placeInUnit(c, spec)
	}
	return p.place(c)
}

// place decides and enforces (nri mode).
func (p *Plugin) place(c container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	n := c.exclusiveCPUs()
	limits := c.pod().Spec.Containers[0].Resources.Limits
	extra, err := p.cpuHints(c, n)
	if err != nil {
		return nil, nil, p.refuse(c, limits, n, p.opts.Scope, err.Error())
	}
	d, err := p.placer.AdmitPod(c.pod(), extra)
	if err != nil {
		return nil, nil, fmt.Errorf("numa-partition %s: pod %s container %s: %w", p.opts.Partition, c.Pod, c.Name, err)
	}
	if !d.Admitted {
		return nil, nil, p.refuse(c, limits, n, p.opts.Scope, d.Reason)
	}
	t := &tracked{c: c}
	nodes := nodesOf(d)
	adj := &api.ContainerAdjustment{}
	if !nodes.IsEmpty() {
		adj.SetLinuxCPUSetMems(nodes.String())
	}
	var updates []*api.ContainerUpdate
	if n > 0 {
		cpus, err := p.pool.take(c.ID, n, p.cpuNodes(nodes))
		if err != nil {
			if _, rerr := p.placer.ReleasePod(c.key()); rerr != nil {
				p.log.Error("releasing a refused container", "container", c.Name, "pod", c.Pod, "err", rerr)
			}
			return nil, nil, p.refuse(c, limits, n, p.opts.Scope, err.Error())
		}
		adj.SetLinuxCPUSetCPUs(cpus.String())
		updates = p.sharedUpdates()
	} else {
		adj.SetLinuxCPUSetCPUs(p.pool.shared().String())
	}
	p.containers[c.ID] = t
	p.log.Info("container placed", "container", c.Name, "pod", c.Pod, "nodes", nodes, "cpus", adj.GetLinux().GetResources().GetCpu().GetCpus())
	return adj, updates, nil
}

// mirror records kubelet's decision (kubelet mode) and says when the
// allocator's own policy would have decided otherwise. The own decision
// is evaluated only: kubelet's is the one durable write.
func (p *Plugin) mirror(c container) error {
	where := runsOn(c)
	extra, err := p.cpuHints(c, c.exclusiveCPUs())
	if err == nil {
		own, err := p.placer.EvaluatePod(c.pod(), extra)
		switch {
		case err != nil:
			p.log.Warn("own decision failed", "container", c.Name, "pod", c.Pod, "err", err)
		case !own.Admitted:
			p.log.Warn("kubelet placed a container the allocator's policy would refuse", "container", c.Name, "pod", c.Pod, "kubelet", where, "reason", own.Reason)
		case !agrees(own, where):
			p.log.Warn("kubelet placed a container other than the allocator's policy would", "container", c.Name, "pod", c.Pod, "kubelet", where, "allocator", nodesOf(own))
		}
	}
	t := &tracked{c: c}
	if _, err := p.placer.AdoptPod(c.pod(), placement(c.Name, where)); err != nil {
		// kubelet decided; the mirror only reports.
		p.log.Error("kubelet's placement does not fit the allocator's state; not mirrored", "container", c.Name, "pod", c.Pod, "err", err)
	}
	p.holdExclusive(c, c.ID)
	p.containers[c.ID] = t
	return nil
}

// StopContainer releases a stopped container: its memory and CPUs are
// free again (a restart is a new container).
func (p *Plugin) StopContainer(_ context.Context, _ *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	defer p.observe(EventStopContainer, time.Now())
	return p.stopContainer(ctr)
}

func (p *Plugin) stopContainer(ctr *api.Container) ([]*api.ContainerUpdate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	freed, err := p.forget(ctr.GetId())
	if err != nil || !freed {
		return nil, err
	}
	return p.sharedUpdates(), nil
}

// RemoveContainer is StopContainer for containers removed unstopped.
func (p *Plugin) RemoveContainer(_ context.Context, _ *api.PodSandbox, ctr *api.Container) error {
	defer p.observe(EventRemoveContainer, time.Now())
	_, err := p.stopContainer(ctr)
	return err
}

// StopPodSandbox releases a pod: its containers have stopped and will
// not restart (a pod placed as one unit holds its nodes and CPUs until
// then).
func (p *Plugin) StopPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	defer p.observe(EventStopPodSandbox, time.Now())
	return p.removePodSandbox(pod)
}

// RemovePodSandbox releases whatever is left of a pod.
func (p *Plugin) RemovePodSandbox(_ context.Context, pod *api.PodSandbox) error {
	defer p.observe(EventRemovePodSandbox, time.Now())
	return p.removePodSandbox(pod)
}

func (p *Plugin) removePodSandbox(pod *api.PodSandbox) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	freed := p.units[types.UID(pod.GetUid())] != nil
	if err := p.releaseUnit(types.UID(pod.GetUid())); err != nil {
		return err
	}
	prefix := pod.GetUid() + "/"
	for id, t := range p.containers {
		if t.c.PodUID == types.UID(pod.GetUid()) {
			f, err := p.forget(id)
			if err != nil {
				return err
			}
			freed = freed || f
		}
	}
	if freed {
		// A sandbox event cannot answer with updates: the shared
		// containers get the freed CPUs once this event is answered.
		go p.pushSharedUpdates()
	}
	for _, a := range p.placer.Allocations() {
		if strings.HasPrefix(string(a.PodUID), prefix) {
			if _, err := p.placer.ReleasePod(a.PodUID); err != nil {
				return fmt.Errorf("numa-partition %s: releasing %s: %w", p.opts.Partition, a.PodUID, err)
			}
		}
	}
	return nil
}

// forget releases container id; true when it held exclusive CPUs.
func (p *Plugin) forget(id string) (bool, error) {
	t, ok := p.containers[id]
	if !ok {
		return false, nil
	}
	delete(p.containers, id)
	if t.unit != nil {
		// Its CPUs stay reserved to its pod (a restart gets them back);
		// the pod's memory is released with the pod.
		delete(t.unit.given, id)
		return false, nil
	}
	freed := p.pool.release(id)
	if _, err := p.placer.ReleasePod(t.c.key()); err != nil {
		return freed, fmt.Errorf("numa-partition %s: releasing %s: %w", p.opts.Partition, t.c.key(), err)
	}
	return freed, nil
}

// forgetKey releases the container holding key, if any.
func (p *Plugin) forgetKey(key types.UID) (bool, error) {
	for id, t := range p.containers {
		if t.c.key() == key {
			return p.forget(id)
		}
	}
	_, err := p.placer.ReleasePod(key)
	return false, err
}

// cpuHints are the CPU Manager's hints for n exclusive CPUs.
func (p *Plugin) cpuHints(c container, n int) (allocator.Hints, error) {
	if n == 0 {
		return allocator.Hints{}, nil
	}
	h, err := p.pool.hints(n)
	if err != nil {
		return allocator.Hints{}, err
	}
	return allocator.Hints{Containers: map[string][]topologymanager.ProviderHints{c.Name: {h}},
		Pod: []topologymanager.ProviderHints{h}}, nil
}

// holdExclusive records the CPUs a Guaranteed container with integer CPUs
// runs on under holding id (its own, or its pod's unit's), when the
// runtime gave it exactly that many; ok says they are held.
func (p *Plugin) holdExclusive(c container, id string) (cpus bitmask.CPUSet, ok bool) {
	n := c.exclusiveCPUs()
	if n == 0 || c.CPUs == "" {
		return cpus, false
	}
	cpus, err := bitmask.ParseCPUList(c.CPUs)
	if err != nil || cpus.Len() != n {
		return cpus, false
	}
	if err := p.pool.hold(id, cpus); err != nil {
		p.log.Warn("exclusive CPUs not held", "container", c.Name, "pod", c.Pod, "cpus", cpus, "err", err)
		return cpus, false
	}
	return cpus, true
}

// exclusive says whether container id has CPUs to itself, alone or as a
// part of its pod's unit.
func (p *Plugin) exclusive(id string, t *tracked) bool {
	if t.unit != nil {
		_, ok := t.unit.given[id]
		return ok
	}
	return p.pool.holds(id)
}

// sharedUpdates move every shared container to the current shared pool
// (nri mode; kubelet's CPU Manager does it itself in kubelet mode).
func (p *Plugin) sharedUpdates() []*api.ContainerUpdate {
	if p.opts.Mode != ModeNRI {
		return nil
	}
	shared := p.pool.shared().String()
	ids := make([]string, 0, len(p.containers))
	for id, t := range p.containers {
		if !p.exclusive(id, t) && t.c.CPUs != shared {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	updates := make([]*api.ContainerUpdate, 0, len(ids))
	for _, id := range ids {
		u := &api.ContainerUpdate{}
		u.SetContainerId(id)
		u.SetLinuxCPUSetCPUs(shared)
		updates = append(updates, u)
		p.containers[id].c.CPUs = shared
	}
	return updates
}

// refuse is the error a container that cannot be placed fails with: it
// reaches kubelet, which puts it in the pod's events. lim are the
// resources asked (the container's, or its pod's placed as one unit).
func (p *Plugin) refuse(c container, lim corev1.ResourceList, cpus int, scope, reason string) error {
	var res []string
	for _, name := range sortedNames(lim) {
		q := lim[name]
		res = append(res, fmt.Sprintf("%s=%s", name, q.String()))
	}
	if cpus > 0 {
		// The allocator's reason says what memory is free; the CPUs
		// are the plugin's.
		reason += "; " + p.pool.describe(cpus)
	}
	return fmt.Errorf("numa-partition %s: pod %s container %s (%s) %v under topology policy %s (scope %s): %s",
		p.opts.Partition, c.Pod, c.Name, strings.Join(res, " "), errPlacement, p.opts.Policy, scope, reason)
}

// runsOn are the memory nodes a container's cpuset names ("" = none).
func runsOn(c container) bitmask.NodeSet {
	if c.Mems == "" {
		return bitmask.NodeSet{}
	}
	set, err := bitmask.ParseNodeList(c.Mems)
	if err != nil {
		return bitmask.NodeSet{}
	}
	return set
}

func placement(name string, where bitmask.NodeSet) map[string]bitmask.NodeSet {
	if where.IsEmpty() {
		return map[string]bitmask.NodeSet{}
	}
	return map[string]bitmask.NodeSet{name: where}
}

// nodesOf are the nodes of a one-container decision's pinned memory.
func nodesOf(d allocator.Decision) bitmask.NodeSet {
	if !d.Pinned || len(d.Containers) == 0 {
		return bitmask.NodeSet{}
	}
	return d.Containers[0].NUMANodes
}

// agrees: a pinned allocation matches the nodes the container runs on;
// unpinned ones match anything.
func agrees(d allocator.Decision, where bitmask.NodeSet) bool {
	nodes := nodesOf(d)
	return nodes.IsEmpty() || where.IsEmpty() || nodes == where
}
