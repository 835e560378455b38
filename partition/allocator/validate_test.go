package allocator

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// hostilePods are pods the API server never lets through, each with the
// field CheckPod must name and what it must say. Before CheckPod was the
// one gate, Admit and Adopt took "negative cpu", "negative overhead",
// "negative pod-level", "negative extended", "4Ei memory", "8Ei
// overhead", "1e15 CPUs", "65537 CPUs" and "1025 containers" (the
// daemon's cap held for its HTTP API only), and "8Ei memory" (parsed as
// 2^63-1 bytes): a -2 CPU limit admitted the pod unpinned, 10^15 CPUs
// pinned it, 4Ei summed past 2^63 in two containers. The others were
// refused by older checks scattered over toPod and memoryRequests.
var hostilePods = []struct {
	name        string
	mutate      func(p *corev1.Pod)
	field, want string
}{
	{name: "negative cpu", mutate: func(p *corev1.Pod) { setBoth(&p.Spec.Containers[0], corev1.ResourceCPU, "-2") },
		field: "spec.containers[0].resources.limits.cpu", want: "-2 is negative"},
	{name: "negative memory request", mutate: func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("-1Gi")
	},
		field: "spec.containers[0].resources.requests.memory", want: "-1Gi is negative"},
	{name: "negative hugepages", mutate: func(p *corev1.Pod) { setBoth(&p.Spec.Containers[0], "hugepages-2Mi", "-2Mi") },
		field: "spec.containers[0].resources.limits.hugepages-2Mi", want: "negative"},
	{name: "negative overhead", mutate: func(p *corev1.Pod) {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1Gi")}
	}, field: "spec.overhead.memory", want: "negative"},
	{name: "negative pod-level", mutate: func(p *corev1.Pod) {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}}
	}, field: "spec.resources.requests.cpu", want: "negative"},
	{name: "negative extended", mutate: func(p *corev1.Pod) { setBoth(&p.Spec.Containers[0], "example.com/gpu", "-1") },
		field: "spec.containers[0].resources.limits.example.com/gpu", want: "negative"},
	{name: "8Ei memory", mutate: func(p *corev1.Pod) { setBoth(&p.Spec.Containers[0], corev1.ResourceMemory, "8Ei") },
		field: "spec.containers[0].resources.limits.memory", want: "at most 4503599627370496 (4Pi"}, // parsed as 2^63-1
	{name: "4Ei memory", mutate: func(p *corev1.Pod) { setBoth(&p.Spec.Containers[0], corev1.ResourceMemory, "4Ei") },
		field: "spec.containers[0].resources.limits.memory", want: "at most 4503599627370496 (4Pi"},
	{name: "8Ei overhead", mutate: func(p *corev1.Pod) {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Ei")}
	}, field: "spec.overhead.memory", want: "at most 4503599627370496 (4Pi"},
	{name: "1e15 CPUs", mutate: func(p *corev1.Pod) { setBoth(&p.Spec.Containers[0], corev1.ResourceCPU, "1e15") },
		field: "spec.containers[0].resources.limits.cpu", want: "at most 65536"},
	{name: "65537 CPUs", mutate: func(p *corev1.Pod) { setBoth(&p.Spec.Containers[0], corev1.ResourceCPU, "65537") },
		field: "spec.containers[0].resources.limits.cpu", want: "at most 65536"},
	{name: "1025 containers", mutate: func(p *corev1.Pod) {
		for i := range MaxContainersPerPod {
			c := p.Spec.Containers[0].DeepCopy()
			c.Name = fmt.Sprintf("c%d", i)
			p.Spec.Containers = append(p.Spec.Containers, *c)
		}
	}, field: "spec.containers", want: "the pod has 1025 containers and init containers; the allocator admits at most 1024"},
	{name: "no containers", mutate: func(p *corev1.Pod) { p.Spec.Containers = nil },
		field: "spec.containers", want: "no containers"},
	{name: "empty name", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Name = "" },
		field: "spec.containers[0].name", want: "empty"},
	{name: "duplicate name", mutate: func(p *corev1.Pod) { p.Spec.InitContainers = []corev1.Container{*p.Spec.Containers[0].DeepCopy()} },
		field: "spec.containers[0].name", want: `"a": the pod has two containers of that name`},
	{name: "not a hugepage size", mutate: func(p *corev1.Pod) { setBoth(&p.Spec.Containers[0], "hugepages-huge", "2Mi") },
		field: "spec.containers[0].resources.limits.hugepages-huge", want: "not a hugepage resource"},
	{name: "fractional bytes", mutate: func(p *corev1.Pod) { setBoth(&p.Spec.Containers[0], corev1.ResourceMemory, "100m") },
		field: "spec.containers[0].resources.limits.memory", want: "not a whole number of bytes"},
}

func setBoth(c *corev1.Container, name corev1.ResourceName, q string) {
	c.Resources.Limits[name] = resource.MustParse(q)
	c.Resources.Requests[name] = resource.MustParse(q)
}

// Repro (#24): every entry point of the allocator refuses each hostile
// pod with the same PodError, naming the field: CheckPod, Admit and
// Adopt (the NRI plugin's and the daemon's paths end in these).
func TestCheckPodRefusesHostilePods(t *testing.T) {
	for _, c := range hostilePods {
		t.Run(c.name, func(t *testing.T) {
			pod := mkPod("p", ctr{name: "a", mem: "1Gi", hp: "2Mi"})
			pod.Spec.Containers[0].Resources.Requests = pod.Spec.Containers[0].Resources.Requests.DeepCopy()
			c.mutate(pod)
			a, err := New(uniform(2, "single-numa-node", ScopeContainer))
			if err != nil {
				t.Fatal(err)
			}
			for entry, call := range map[string]func() error{
				"CheckPod": func() error { return CheckPod(pod) },
				"Admit":    func() error { _, err := a.Admit(pod); return err },
				"Adopt":    func() error { _, err := a.Adopt(pod, nil); return err },
			} {
				err := call()
				var pe *PodError
				if !errors.As(err, &pe) || pe.Field != c.field || !strings.Contains(pe.Msg, c.want) {
					t.Errorf("%s: %v; want a PodError at %s saying %q", entry, err, c.field, c.want)
				}
			}
			if n := len(a.Allocations()); n != 0 {
				t.Errorf("%d allocations after the refusals", n)
			}
		})
	}
}

// The bounds themselves are allowed: MaxCPUs CPUs and MaxBytes of memory
// in each of MaxContainersPerPod containers (their sums fit int64).
func TestCheckPodTakesTheBounds(t *testing.T) {
	pod := mkPod("p", ctr{name: "c0", mem: "1Gi"})
	setBoth(&pod.Spec.Containers[0], corev1.ResourceCPU, fmt.Sprint(bitmask.MaxCPUs))
	setBoth(&pod.Spec.Containers[0], corev1.ResourceMemory, "4Pi")
	for i := 1; i < MaxContainersPerPod; i++ {
		c := pod.Spec.Containers[0].DeepCopy()
		c.Name = fmt.Sprintf("c%d", i)
		pod.Spec.Containers = append(pod.Spec.Containers, *c)
	}
	pod.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Pi")}
	if err := CheckPod(pod); err != nil {
		t.Fatal(err)
	}
}

// Repro (#24): a checkpoint (its checksum recomputed) whose decision had
// two containers of one name, or whose block held 2^63 bytes, was
// restored. Restore applies CheckPod's rules to what it reads back.
func TestRestoreRefusesWhatCheckPodWould(t *testing.T) {
	cfg := uniform(2, "single-numa-node", ScopeContainer)
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := a.Admit(mkPod("p", ctr{name: "a", mem: "1Gi"})); err != nil || !d.Admitted {
		t.Fatalf("%+v %v", d, err)
	}
	for name, c := range map[string]struct {
		edit func(st *State)
		want string
	}{
		"duplicate container": {func(st *State) {
			st.Allocations[0].Containers = append(st.Allocations[0].Containers, st.Allocations[0].Containers[0])
		}, `containers[1].name: "a": the pod has two containers of that name`},
		"absurd decision": {func(st *State) { st.Allocations[0].Containers[0].Memory[ResourceMemory] = 1 << 63 },
			"containers[0].memory[memory]: 9223372036854775808 bytes: at most"},
		"absurd block": {func(st *State) { st.Blocks["p"]["a"][0].Size = 1 << 63 },
			"9223372036854775808 bytes: at most"},
	} {
		t.Run(name, func(t *testing.T) {
			st := a.State() // a deep copy
			c.edit(&st)
			if _, _, err := Restore(cfg, st); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v; want an error saying %q", err, c.want)
			}
		})
	}
}
