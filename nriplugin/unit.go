package nriplugin

import (
	"context"
	"fmt"

	"github.com/containerd/nri/pkg/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/kubevirt"
)

// A pod placed as one unit: in pod scope, and every KubeVirt
// virt-launcher pod (one VM). NRI announces a pod's containers one at a
// time, with their cgroup settings only, so at the first container the
// plugin reads the whole pod from the API server (PodReader, with the
// partition kubelet's credentials), admits it at once (memory and
// hugepages of every container, the CPU Manager's pod-level hint), and
// reserves the exclusive CPUs of all its containers together. The read
// is from a pod cache fed by a watch (kubeapi.PodCache), made before the
// plugin's lock is taken: an API server that is slow or down delays the
// first container of such a pod, and nothing else. Each
// container then gets its share of the unit's nodes and CPUs when it is
// created; the unit is released when the pod sandbox stops.

// PodReader reads a pod's spec (kubeapi.PodCache.Pod), waiting a bounded
// time for a pod it does not hold yet.
type PodReader interface {
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
}

// unit is a pod placed as one unit.
type unit struct {
	uid      types.UID
	decision allocator.Decision
	nodes    bitmask.NodeSet           // where its pinned memory is; empty if unpinned
	given    map[string]bitmask.CPUSet // container id -> its exclusive CPUs (a part of the reservation)
}

// reservation is the unit's holding in the CPU pool.
func (u *unit) reservation() string { return "pod/" + string(u.uid) }

func (u *unit) busy() bitmask.CPUSet {
	var s bitmask.CPUSet
	for _, cpus := range u.given {
		s = s.Union(cpus)
	}
	return s
}

// nodesOf are the nodes of container name's pinned memory; the unit's
// for a container the admission did not know.
func (u *unit) nodesOf(name string) bitmask.NodeSet {
	if nodes := nodesOfContainer(u.decision, name); !nodes.IsEmpty() {
		return nodes
	}
	return u.nodes
}

// asUnit says whether c's pod is placed as one unit.
func (p *Plugin) asUnit(c container) bool { return p.asUnitPod(c.Labels, c.QoS) }

// asUnitPod says whether a pod is placed as one unit: a Guaranteed pod
// (the others are not pinned and share the pool) in pod scope, or a
// virt-launcher pod.
func (p *Plugin) asUnitPod(labels map[string]string, qos corev1.PodQOSClass) bool {
	return p.opts.Mode == ModeNRI && qos == corev1.PodQOSGuaranteed &&
		(p.opts.Scope == allocator.ScopePod || kubevirt.IsLauncherPod(labels))
}

// hasUnit says whether pod uid is placed as one unit already.
func (p *Plugin) hasUnit(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.units[uid] != nil
}

// placeInUnit places c as a part of its pod's unit, admitting the unit
// at its first container with spec, the pod read from the API server.
func (p *Plugin) placeInUnit(c container, spec *corev1.Pod) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	u, updates, err := p.unitOf(c, spec)
	if err != nil {
		return nil, nil, err
	}
	adj := &api.ContainerAdjustment{}
	nodes := u.nodesOf(c.Name)
	if !nodes.IsEmpty() {
		adj.SetLinuxCPUSetMems(nodes.String())
	}
	if n := c.exclusiveCPUs(); n > 0 {
		cpus, err := p.unitCPUs(u, c, n)
		if err != nil {
			return nil, nil, p.refuse(c, c.pod().Spec.Containers[0].Resources.Limits, n, allocator.ScopePod, err.Error())
		}
		adj.SetLinuxCPUSetCPUs(cpus.String())
		updates = append(updates, p.sharedUpdates()...) // more only if the reservation grew
	} else {
		adj.SetLinuxCPUSetCPUs(p.pool.shared().String())
	}
	p.containers[c.ID] = &tracked{c: c, unit: u}
	p.log.Info("container placed", "container", c.Name, "pod", c.Pod, "unit", true, "nodes", nodes,
		"cpus", adj.GetLinux().GetResources().GetCpu().GetCpus())
	return adj, updates, nil
}

// unitCPUs gives container c n CPUs of its unit's reservation, growing
// the reservation on the unit's nodes when it is short (a container the
// admission did not count, or a unit rebuilt after a restart).
func (p *Plugin) unitCPUs(u *unit, c container, n int) (bitmask.CPUSet, error) {
	if cpus, ok := u.given[c.ID]; ok {
		return cpus, nil
	}
	id := u.reservation()
	busy := u.busy()
	cpus, err := p.pool.pick(p.pool.exclusive[id], busy, n)
	if err != nil {
		free := p.pool.exclusive[id].Difference(busy).Len()
		if err := p.pool.extend(id, n-free, p.cpuNodes(u.nodes)); err != nil {
			return bitmask.CPUSet{}, err
		}
		if cpus, err = p.pool.pick(p.pool.exclusive[id], busy, n); err != nil {
			return bitmask.CPUSet{}, err
		}
	}
	u.given[c.ID] = cpus
	return cpus, nil
}

// cpuNodes are where exclusive CPUs for memory pinned on mems come from:
// those nodes, or any of the partition's when nothing is pinned.
func (p *Plugin) cpuNodes(mems bitmask.NodeSet) bitmask.NodeSet {
	if !mems.IsEmpty() {
		return mems
	}
	return bitmask.NewNodeSet(p.pool.nodes...)
}

// unitOf is c's pod's unit, admitted now with spec if c is its first
// container; the updates move shared containers off the CPUs it
// reserved.
func (p *Plugin) unitOf(c container, spec *corev1.Pod) (*unit, []*api.ContainerUpdate, error) {
	if u, ok := p.units[c.PodUID]; ok {
		return u, nil, nil
	}
	if spec == nil {
		// The unit was there when CreateContainer looked and has been
		// released since: its sandbox was removed meanwhile.
		return nil, nil, fmt.Errorf("numa-partition %s: pod %s container %s: the pod's unit was released while the container was created (its sandbox was removed)",
			p.opts.Partition, c.Pod, c.Name)
	}
	pod := unitPod(c, spec)
	// The API server's pod is checked as every pod the allocator is
	// given, before its CPUs are counted (an int per container).
	if err := allocator.CheckPod(pod); err != nil {
		return nil, nil, fmt.Errorf("numa-partition %s: %w", p.opts.Partition, err)
	}
	total := podExclusiveCPUs(c.QoS, pod)
	limits := podLimits(pod)
	extra := allocator.Hints{}
	if total > 0 {
		h, err := p.pool.hints(total)
		if err != nil {
			return nil, nil, p.refuse(c, limits, total, allocator.ScopePod, err.Error())
		}
		extra.Pod = append(extra.Pod, h)
	}
	d, err := p.placer.AdmitPod(pod, extra)
	if err != nil {
		return nil, nil, fmt.Errorf("numa-partition %s: pod %s: %w", p.opts.Partition, c.Pod, err)
	}
	if !d.Admitted {
		return nil, nil, p.refuse(c, limits, total, allocator.ScopePod, d.Reason)
	}
	u := &unit{uid: c.PodUID, decision: d, given: map[string]bitmask.CPUSet{}}
	for _, cd := range d.Containers {
		u.nodes = u.nodes.Union(cd.NUMANodes)
	}
	if err := p.pool.extend(u.reservation(), total, p.cpuNodes(u.nodes)); err != nil {
		if _, rerr := p.placer.ReleasePod(u.uid); rerr != nil {
			p.log.Error("releasing a refused pod", "pod", c.Pod, "err", rerr)
		}
		return nil, nil, p.refuse(c, limits, total, allocator.ScopePod, err.Error())
	}
	p.units[u.uid] = u
	p.log.Info("pod placed as one unit", "pod", c.Pod, "nodes", u.nodes, "exclusive", p.pool.exclusive[u.reservation()])
	return u, p.sharedUpdates(), nil
}

// readPod reads c's pod and checks it is the pod NRI announced: the same
// UID, or the mirror pod of a static pod (whose UID the API server chose).
func (p *Plugin) readPod(ctx context.Context, c container) (*corev1.Pod, error) {
	if p.opts.Pods == nil {
		return nil, fmt.Errorf("no API server configured (Options.Pods)")
	}
	spec, err := p.opts.Pods.Pod(ctx, c.Namespace, c.PodName)
	if err != nil {
		return nil, err
	}
	if spec.UID != c.PodUID {
		if _, mirror := spec.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
			return nil, fmt.Errorf("the API server's pod %s has uid %s, the runtime's %s (the pod was replaced)", c.Pod, spec.UID, c.PodUID)
		}
	}
	return spec, nil
}

// unitPod is the pod the allocator admits: the runtime's identity and
// labels, and of the spec what placement reads (containers' resources,
// init containers' restart policies, pod-level resources and overhead).
func unitPod(c container, spec *corev1.Pod) *corev1.Pod {
	strip := func(in []corev1.Container) []corev1.Container {
		out := make([]corev1.Container, 0, len(in))
		for _, x := range in {
			out = append(out, corev1.Container{Name: x.Name, Resources: x.Resources, RestartPolicy: x.RestartPolicy})
		}
		return out
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: c.PodUID, Namespace: c.Namespace, Name: c.PodName, Labels: spec.Labels},
		Spec: corev1.PodSpec{Containers: strip(spec.Spec.Containers), InitContainers: strip(spec.Spec.InitContainers),
			Resources: spec.Spec.Resources, Overhead: spec.Spec.Overhead},
	}
}

// podExclusiveCPUs is how many exclusive CPUs a pod's containers take at
// most at once, as kubelet's static CPU Manager counts them for its
// pod-level hint: the app containers and sidecars together, or an init
// container (run before them, its CPUs reused) if that is more.
func podExclusiveCPUs(qos corev1.PodQOSClass, pod *corev1.Pod) int {
	if qos != corev1.PodQOSGuaranteed {
		return 0
	}
	n := func(x corev1.Container) int {
		q, ok := x.Resources.Limits[corev1.ResourceCPU]
		if !ok || q.MilliValue()%1000 != 0 {
			return 0
		}
		return int(q.Value())
	}
	apps, inits, sidecars := 0, 0, 0
	for _, x := range pod.Spec.InitContainers {
		if x.RestartPolicy != nil && *x.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars += n(x)
			continue
		}
		inits = max(inits, sidecars+n(x))
	}
	for _, x := range pod.Spec.Containers {
		apps += n(x)
	}
	return max(inits, apps+sidecars)
}

// podLimits are the pod's containers' limits added up (for errors).
func podLimits(pod *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, x := range pod.Spec.Containers {
		for name, q := range x.Resources.Limits {
			v := sum[name]
			v.Add(q)
			sum[name] = v
		}
	}
	return sum
}

// releaseUnit frees a pod's unit and the containers it still tracks.
func (p *Plugin) releaseUnit(uid types.UID) error {
	u, ok := p.units[uid]
	if !ok {
		return nil
	}
	for id, t := range p.containers {
		if t.unit == u {
			delete(p.containers, id)
		}
	}
	delete(p.units, uid)
	p.pool.release(u.reservation())
	if _, err := p.placer.ReleasePod(uid); err != nil {
		return fmt.Errorf("numa-partition %s: releasing pod %s: %w", p.opts.Partition, uid, err)
	}
	return nil
}

// syncUnit rebuilds a unit from its running containers (Synchronize):
// its allocation is kept when every container runs where it says, and
// otherwise the runtime wins (the containers that run are adopted where
// they run); its reservation is the exclusive CPUs its containers hold.
func (p *Plugin) syncUnit(uid types.UID, ctrs []container, known map[types.UID]allocator.Allocation) error {
	a, ok := known[uid]
	for _, c := range ctrs {
		if !ok {
			break
		}
		if nodes, where := nodesOfContainer(a, c.Name), runsOn(c); !nodes.IsEmpty() && !where.IsEmpty() && nodes != where {
			p.log.Warn("allocation differs from where the container runs; the runtime wins", "container", c.Name, "pod", c.Pod,
				"allocated", nodes, "runs", where)
			if _, err := p.placer.ReleasePod(uid); err != nil {
				return fmt.Errorf("releasing %s: %w", uid, err)
			}
			ok = false
		}
	}
	if !ok && len(ctrs) == 0 {
		return nil // nothing runs and nothing was allocated: the first container admits it
	}
	if !ok {
		pod, placed := adoptedUnitPod(ctrs)
		d, err := p.placer.AdoptPod(pod, placed)
		if err != nil {
			p.log.Error("pod runs where the allocator cannot account for it; its memory is not in the state", "pod", ctrs[0].Pod, "err", err)
			d = allocator.Decision{PodUID: uid}
		} else {
			p.log.Info("running pod adopted where it runs", "pod", ctrs[0].Pod, "containers", len(ctrs))
		}
		a = d
	}
	u := &unit{uid: uid, decision: a, given: map[string]bitmask.CPUSet{}}
	for _, cd := range a.Containers {
		u.nodes = u.nodes.Union(cd.NUMANodes)
	}
	p.units[uid] = u
	for _, c := range ctrs {
		p.containers[c.ID] = &tracked{c: c, unit: u}
		if cpus, ok := p.holdExclusive(c, u.reservation()); ok {
			u.given[c.ID] = cpus
		}
	}
	return nil
}

// adoptedUnitPod is a unit pod as far as its running containers tell
// (NRI's cgroup settings), each placed where it runs.
func adoptedUnitPod(ctrs []container) (*corev1.Pod, map[string]bitmask.NodeSet) {
	c0 := ctrs[0]
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: c0.PodUID, Namespace: c0.Namespace, Name: c0.PodName, Labels: c0.Labels}}
	placed := map[string]bitmask.NodeSet{}
	for _, c := range ctrs {
		pod.Spec.Containers = append(pod.Spec.Containers, c.pod().Spec.Containers[0])
		if where := runsOn(c); !where.IsEmpty() {
			placed[c.Name] = where
		}
	}
	return pod, placed
}

// nodesOfContainer are the nodes of container name's pinned memory in a
// decision (empty when unpinned).
func nodesOfContainer(d allocator.Decision, name string) bitmask.NodeSet {
	for _, c := range d.Containers {
		if c.Name == name {
			return c.NUMANodes
		}
	}
	return bitmask.NodeSet{}
}
