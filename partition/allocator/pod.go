package allocator

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/numa-partition/numa-partition/partition/policy/memorymanager"
)

// effective returns a container's requests as the API server defaults
// them: a missing request takes the limit.
func effective(c *corev1.Container) (req, lim corev1.ResourceList) {
	req = corev1.ResourceList{}
	for name, q := range c.Resources.Requests {
		req[name] = q
	}
	for name, q := range c.Resources.Limits {
		if _, ok := req[name]; !ok {
			req[name] = q
		}
	}
	return req, c.Resources.Limits
}

// podLevelResourcesSet is kubelet's IsPodLevelResourcesSet
// (k8s.io/component-helpers/resource): spec.resources names at least one
// resource pod-level management supports (cpu, memory, hugepages-*) in
// its requests or limits. A present but empty spec.resources ({}), or one
// naming only other resources, does not count: kubelet pins such a pod.
func podLevelResourcesSet(pod *corev1.Pod) bool {
	r := pod.Spec.Resources
	if r == nil {
		return false
	}
	for _, list := range []corev1.ResourceList{r.Requests, r.Limits} {
		for name := range list {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
				return true
			}
		}
	}
	return false
}

// isGuaranteed is kubelet's GetPodQOS == Guaranteed (M3): every container,
// init containers included, has cpu and memory limits above 0, and the
// pod's summed cpu/memory requests equal its summed limits.
func isGuaranteed(pod *corev1.Pod) bool {
	requests, limits := map[corev1.ResourceName]*resource.Quantity{}, map[corev1.ResourceName]*resource.Quantity{}
	add := func(m map[corev1.ResourceName]*resource.Quantity, name corev1.ResourceName, q resource.Quantity) {
		if m[name] == nil {
			c := q.DeepCopy()
			m[name] = &c
			return
		}
		m[name].Add(q)
	}
	guaranteed := true
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for i := range all {
		req, lim := effective(&all[i])
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := req[name]; ok && q.Sign() > 0 {
				add(requests, name, q)
			}
			if q, ok := lim[name]; ok && q.Sign() > 0 {
				add(limits, name, q)
			} else {
				guaranteed = false
			}
		}
	}
	if !guaranteed || len(requests) != len(limits) {
		return false
	}
	for name, r := range requests {
		if l, ok := limits[name]; !ok || l.Cmp(*r) != 0 {
			return false
		}
	}
	return true
}

func isRestartable(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// memoryRequests returns a container's memory and hugepages-* requests in
// bytes (memoryBytes, the rule CheckPod applied); field names the
// container in errors.
func memoryRequests(c *corev1.Container, field string) (map[memorymanager.ResourceName]uint64, error) {
	req, _ := effective(c)
	out := map[memorymanager.ResourceName]uint64{}
	for name, q := range req {
		if !isMemoryResource(name) {
			continue
		}
		canonical, b, err := memoryBytes(name, q)
		if err != nil {
			return nil, fmt.Errorf("%s.resources.requests.%s: %w", field, name, err)
		}
		out[canonical] = b
	}
	return out, nil
}

// toPod converts a pod CheckPod accepted for the static policy.
func toPod(pod *corev1.Pod) (*memorymanager.Pod, error) {
	p := &memorymanager.Pod{UID: string(pod.UID)}
	convert := func(cs []corev1.Container, list string, init bool) ([]memorymanager.Container, error) {
		var out []memorymanager.Container
		for i := range cs {
			c := &cs[i]
			req, err := memoryRequests(c, fmt.Sprintf("spec.%s[%d]", list, i))
			if err != nil {
				return nil, err
			}
			out = append(out, memorymanager.Container{Name: c.Name, Requests: req, Init: init, Restartable: init && isRestartable(c)})
		}
		return out, nil
	}
	var err error
	if p.Init, err = convert(pod.Spec.InitContainers, "initContainers", true); err != nil {
		return nil, err
	}
	if p.App, err = convert(pod.Spec.Containers, "containers", false); err != nil {
		return nil, err
	}
	return p, nil
}
