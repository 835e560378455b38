package nriplugin

import (
	"context"
	"fmt"
	"testing"

	"github.com/containerd/nri/pkg/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/kubevirt"
)

// apiPods is the API server as the plugin reads it: pods by
// namespace/name, and how often each was read.
type apiPods struct {
	pods  map[string]*corev1.Pod
	reads map[string]int
}

func newAPIPods(pods ...*corev1.Pod) *apiPods {
	a := &apiPods{pods: map[string]*corev1.Pod{}, reads: map[string]int{}}
	for _, p := range pods {
		a.pods[p.Namespace+"/"+p.Name] = p
	}
	return a
}

func (a *apiPods) Pod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	a.reads[namespace+"/"+name]++
	p, ok := a.pods[namespace+"/"+name]
	if !ok {
		return nil, fmt.Errorf("pods %q not found", name)
	}
	return p.DeepCopy(), nil
}

// apiContainer is a Guaranteed container of a pod spec.
type apiContainer struct {
	name   string
	milli  int64
	memory int64
}

// apiPod is the API server's pod for sandbox(uid, "") and its containers.
func apiPod(uid string, ctrs ...apiContainer) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod-" + uid, Namespace: "ns", UID: types.UID(uid)}}
	for _, c := range ctrs {
		l := corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(c.milli, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(c.memory, resource.BinarySI)}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c.name, Resources: corev1.ResourceRequirements{Requests: l, Limits: l}})
	}
	return p
}

// nriOf are the pod's containers as NRI announces them.
func nriOf(p *corev1.Pod) []*api.Container {
	var out []*api.Container
	for _, c := range p.Spec.Containers {
		out = append(out, ctr("c-"+string(p.UID)+"-"+c.Name, string(p.UID), c.Name,
			c.Resources.Limits.Cpu().MilliValue(), c.Resources.Limits.Memory().Value(), 0))
	}
	return out
}

func unitHarness(t *testing.T, policy, scope string, pods *apiPods) *harness {
	h := &harness{t: t, dir: t.TempDir(), mode: ModeNRI, policy: policy, scope: scope, pods: pods}
	h.restart()
	return h
}

// Pod scope: the pod is read once and placed as one unit. 4Gi + 5Gi do
// not fit node 0 (8Gi free) but do fit node 1 (9Gi), so single-numa-node puts
// both containers there, with their exclusive cores reserved together;
// container scope would have split them (TestUnitOnlyWherePodScope).
func TestPodScopePlacesThePodAsOneUnit(t *testing.T) {
	spec := apiPod("p1", apiContainer{"a", 2000, 4 * gi}, apiContainer{"b", 2000, 5 * gi})
	pods := newAPIPods(spec)
	h := unitHarness(t, "single-numa-node", "pod", pods)
	shared := ctr("c-shared", "p0", "web", 500, gi, 0)
	h.mustCreate(sandbox("p0", "burstable"), shared) // not Guaranteed: nothing to place as a unit, no read

	cs := nriOf(spec)
	mems, cpus, updates := h.mustCreate(sandbox("p1", ""), cs[0])
	assert.Equal(t, "1", mems)
	assert.Equal(t, "4-5", cpus)
	assert.Equal(t, map[string]string{"c-shared": "0-3"}, updated(updates), "both containers' cores leave the shared pool at once")
	mems, cpus, updates = h.mustCreate(sandbox("p1", ""), cs[1])
	assert.Equal(t, "1", mems, "the second container joins its pod's node")
	assert.Equal(t, "6-7", cpus, "and gets the other reserved core")
	assert.Empty(t, updated(updates), "the reservation did not change")
	assert.Equal(t, 1, pods.reads["ns/pod-p1"], "the pod is read once, at its first container")
	assert.Equal(t, []string{"p0/web", "p1"}, h.allocated(), "one allocation for the pod")

	// A container of the unit stops and restarts: its pod keeps its
	// nodes and cores, and the restarted container gets them back.
	_, err := h.plugin.StopContainer(context.Background(), sandbox("p1", ""), cs[0])
	require.NoError(t, err)
	assert.Equal(t, "4-7", h.plugin.pool.taken().String(), "a stopped container's cores stay its pod's")
	restarted := ctr("c-p1-a-2", "p1", "a", 2000, 4*gi, 0)
	mems, cpus, _ = h.mustCreate(sandbox("p1", ""), restarted)
	assert.Equal(t, []string{"1", "4-5"}, []string{mems, cpus})

	// The sandbox stops: everything is released.
	require.NoError(t, h.plugin.StopPodSandbox(context.Background(), sandbox("p1", "")))
	assert.Equal(t, []string{"p0/web"}, h.allocated())
	assert.True(t, h.plugin.pool.taken().IsEmpty(), "taken %s", h.plugin.pool.taken())
	assert.Empty(t, h.plugin.units)
}

func TestUnitOnlyWherePodScope(t *testing.T) {
	spec := apiPod("p1", apiContainer{"a", 2000, 4 * gi}, apiContainer{"b", 2000, 5 * gi})
	pods := newAPIPods(spec)
	h := unitHarness(t, "single-numa-node", "container", pods)
	cs := nriOf(spec)
	mems, _, _ := h.mustCreate(sandbox("p1", ""), cs[0])
	assert.Equal(t, "0", mems, "container scope places the first container alone")
	mems, _, _ = h.mustCreate(sandbox("p1", ""), cs[1])
	assert.Equal(t, "1", mems)
	assert.Zero(t, pods.reads["ns/pod-p1"], "container scope needs no pod spec")
}

// A virt-launcher pod is one VM: one unit even in container scope.
func TestLauncherPodIsOneUnitInContainerScope(t *testing.T) {
	spec := apiPod("vm1", apiContainer{"compute", 2000, 5 * gi}, apiContainer{"guest-console-log", 2000, 4 * gi})
	spec.Labels = map[string]string{kubevirt.LauncherLabel: kubevirt.LauncherLabelValue}
	h := unitHarness(t, "single-numa-node", "container", newAPIPods(spec))
	sb := sandbox("vm1", "")
	sb.Labels = spec.Labels
	cs := nriOf(spec)
	for _, c := range cs {
		mems, _, _ := h.mustCreate(sb, c)
		assert.Equal(t, "1", mems, "container %s: 9Gi fit node 1 only", c.Name)
	}
	assert.Equal(t, []string{"vm1"}, h.allocated())
}

// A pod that does not fit as one unit is refused at its first container,
// with the pod's resources and the pod scope in the error.
func TestUnitRefusedWithThePodsResources(t *testing.T) {
	spec := apiPod("big", apiContainer{"a", 2000, 6 * gi}, apiContainer{"b", 2000, 6 * gi})
	h := unitHarness(t, "single-numa-node", "pod", newAPIPods(spec))
	_, _, err := h.create(sandbox("big", ""), nriOf(spec)[0])
	require.Error(t, err)
	for _, want := range []string{"pod ns/pod-big container a", "cpu=4", "memory=12Gi",
		"cannot be placed under topology policy single-numa-node (scope pod)", "TopologyAffinityError",
		"; policy single-numa-node, scope pod; memory: asked 12Gi, free ", "; cpu: asked 4 exclusive, free "} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Empty(t, h.allocated())
	assert.True(t, h.plugin.pool.taken().IsEmpty())
}

// The API server's pod must be the runtime's: the same UID, or a static
// pod's mirror. A pod the API server does not know cannot be placed.
func TestUnitReadsThePodTheRuntimeRuns(t *testing.T) {
	replaced := apiPod("other-uid", apiContainer{"a", 2000, gi})
	replaced.Name = "pod-p1"
	h := unitHarness(t, "best-effort", "pod", newAPIPods(replaced))
	_, _, err := h.create(sandbox("p1", ""), ctr("c1", "p1", "a", 2000, gi, 0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has uid other-uid, the runtime's p1")

	mirror := replaced.DeepCopy()
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
	h = unitHarness(t, "best-effort", "pod", newAPIPods(mirror))
	_, _, err = h.create(sandbox("p1", ""), ctr("c1", "p1", "a", 2000, gi, 0))
	require.NoError(t, err, "a static pod's mirror has the API server's uid")
	assert.Equal(t, []string{"p1"}, h.allocated(), "allocated under the runtime's uid")

	h = unitHarness(t, "best-effort", "pod", newAPIPods())
	_, _, err = h.create(sandbox("p2", ""), ctr("c2", "p2", "a", 2000, gi, 0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "placing the pod as one unit needs its spec: pods \"pod-p2\" not found")
}

func TestPodScopeNeedsPods(t *testing.T) {
	_, err := New(Options{Partition: "node0", Name: "numa-partition-node0", Mode: ModeNRI, CPUs: testTopology(), Scope: allocator.ScopePod}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Options.Pods")
}

// After a kill -9 the unit is rebuilt from its running containers: its
// allocation is kept, its reservation is the cores they hold, and a
// container created later joins it.
func TestUnitSynchronizeAfterKill(t *testing.T) {
	spec := apiPod("p1", apiContainer{"a", 2000, 4 * gi}, apiContainer{"b", 2000, 5 * gi})
	h := unitHarness(t, "single-numa-node", "pod", newAPIPods(spec))
	cs := nriOf(spec)
	h.mustCreate(sandbox("p1", ""), cs[0])
	h.restart()
	cs[0].State = api.ContainerState_CONTAINER_RUNNING
	_, err := h.plugin.Synchronize(context.Background(), []*api.PodSandbox{sandbox("p1", "")}, []*api.Container{cs[0]})
	require.NoError(t, err)
	assert.Equal(t, []string{"p1"}, h.allocated(), "the pod's allocation survives")
	require.Contains(t, h.plugin.units, types.UID("p1"))
	assert.Equal(t, "4-5", h.plugin.pool.taken().String(), "the reservation is what runs")
	mems, cpus, _ := h.mustCreate(sandbox("p1", ""), cs[1])
	assert.Equal(t, []string{"1", "6-7"}, []string{mems, cpus}, "a later container joins its pod on its node")

	// A unit whose containers run elsewhere than its allocation: the
	// runtime wins.
	h.restart()
	moved := ctr("c-p1-a", "p1", "a", 2000, 4*gi, 0)
	moved.Linux.Resources.Cpu.Cpus, moved.Linux.Resources.Cpu.Mems = "0-1", "0"
	moved.State = api.ContainerState_CONTAINER_RUNNING
	_, err = h.plugin.Synchronize(context.Background(), []*api.PodSandbox{sandbox("p1", "")}, []*api.Container{moved})
	require.NoError(t, err)
	allocs := h.server.Allocations()
	require.Len(t, allocs, 1)
	assert.Equal(t, "0", allocs[0].Containers[0].NUMANodes.String(), "adopted where it runs")
	assert.Contains(t, h.logs.String(), "the runtime wins")
}

// The pod's exclusive CPUs at most at once, as kubelet's static CPU
// Manager counts them for the pod-level hint.
func TestPodExclusiveCPUs(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	cpu := func(name string, milli int64) corev1.Container {
		l := corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}
		return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: l, Limits: l}}
	}
	sidecar := cpu("sidecar", 2000)
	sidecar.RestartPolicy = &always
	for _, tc := range []struct {
		name  string
		inits []corev1.Container
		apps  []corev1.Container
		qos   corev1.PodQOSClass
		want  int
	}{
		{"apps add up", nil, []corev1.Container{cpu("a", 2000), cpu("b", 4000)}, corev1.PodQOSGuaranteed, 6},
		{"fractional CPUs are shared", nil, []corev1.Container{cpu("a", 2000), cpu("b", 1500)}, corev1.PodQOSGuaranteed, 2},
		{"a larger init container", []corev1.Container{cpu("init", 8000)}, []corev1.Container{cpu("a", 2000)}, corev1.PodQOSGuaranteed, 8},
		{"a smaller init container", []corev1.Container{cpu("init", 2000)}, []corev1.Container{cpu("a", 4000)}, corev1.PodQOSGuaranteed, 4},
		{"sidecars run beside the apps", []corev1.Container{sidecar}, []corev1.Container{cpu("a", 4000)}, corev1.PodQOSGuaranteed, 6},
		{"an init container after a sidecar", []corev1.Container{sidecar, cpu("init", 6000)}, []corev1.Container{cpu("a", 2000)}, corev1.PodQOSGuaranteed, 8},
		{"not Guaranteed", nil, []corev1.Container{cpu("a", 2000)}, corev1.PodQOSBurstable, 0},
	} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: tc.inits, Containers: tc.apps}}
		assert.Equal(t, tc.want, podExclusiveCPUs(tc.qos, pod), tc.name)
	}
}

// Repro (#24): the pod read from the API server was counted before the
// allocator saw it: two containers of 2^62 CPUs each added up past int
// (podExclusiveCPUs) to a negative count, so the pod asked for no
// exclusive core at all. The API server's pod goes through the
// allocator's one gate first and is refused, naming the field.
func TestUnitRefusesAnAbsurdPodFromTheAPIServer(t *testing.T) {
	spec := apiPod("p1", apiContainer{"a", 2000, gi}, apiContainer{"b", 2000, gi})
	for i := range spec.Spec.Containers {
		huge := resource.MustParse("4611686018427387904") // 2^62 CPUs
		spec.Spec.Containers[i].Resources.Limits[corev1.ResourceCPU] = huge
		spec.Spec.Containers[i].Resources.Requests[corev1.ResourceCPU] = huge
	}
	h := unitHarness(t, "single-numa-node", "pod", newAPIPods(spec))
	_, _, err := h.create(sandbox("p1", ""), nriOf(apiPod("p1", apiContainer{"a", 2000, gi}))[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.containers[0].resources.limits.cpu: 4611686018427387904 CPUs: at most 65536")
	assert.Empty(t, h.allocated())
}

func TestNameIsRequired(t *testing.T) {
	_, err := New(Options{Partition: "node0", Mode: ModeNRI, CPUs: testTopology()}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Options.Name")
}

// The unit a container placed alone is admitted as ("<pod>/<container>")
// passes the allocator's own pod check: with Kubernetes' name rules there
// (#38) every container of the nri mode was refused in the e2e ("is not a
// pod name"), kube-proxy and flannel included.
func TestContainerUnitPassesThePodCheck(t *testing.T) {
	for _, qos := range []corev1.PodQOSClass{corev1.PodQOSBestEffort, corev1.PodQOSBurstable, corev1.PodQOSGuaranteed} {
		c := container{ID: "c1", Name: "kube-proxy", PodUID: "0f0e", Namespace: "kube-system", PodName: "kube-proxy-jbxlw",
			QoS: qos, CPURequestMilli: 1000, CPULimitMilli: 1000, MemoryLimit: 64 << 20, Hugepages: map[corev1.ResourceName]int64{}}
		if err := allocator.CheckPod(c.pod()); err != nil {
			t.Errorf("%s: %v", qos, err)
		}
	}
}
