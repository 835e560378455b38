package allocator

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/policy/memorymanager"
)

// MaxContainersPerPod bounds one admission (far above any real pod; an
// admission's cost is linear in it). Init containers count.
const MaxContainersPerPod = 1024

// MaxCPUs is the most CPUs one quantity may ask for: no Linux machine has
// more (bitmask.MaxCPUs, above the kernel's NR_CPUS). With it every sum of
// a pod's milli-CPUs fits int64 many times over.
const MaxCPUs = bitmask.MaxCPUs

// MaxBytes is the most memory or hugepages one quantity may ask for:
// 4 PiB, all that 52-bit physical addresses (x86-64's and arm64's widest)
// reach. A pod's MaxContainersPerPod containers, its overhead and its
// pod-level resources at MaxBytes each still add up below 2^63, so no sum
// of a pod's bytes wraps, as uint64 or as kubelet's int64.
const MaxBytes = memorymanager.MaxBytes

// PodError is a pod the allocator refuses, Field naming where as the
// manifest spells it (spec.containers[0].resources.limits.memory).
type PodError struct {
	Pod   string // namespace/name
	Field string
	Msg   string
}

func (e *PodError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("pod %s: %s", e.Pod, e.Msg)
	}
	return fmt.Sprintf("pod %s: %s: %s", e.Pod, e.Field, e.Msg)
}

// FieldPath is the wrong field, for clients that name it apart.
func (e *PodError) FieldPath() string { return e.Field }

// CheckPod is the one gate for every pod the allocator is given, whoever
// made it: a manifest sent to the daemon's API (admit -f), a pod the NRI
// plugin read from the API server or made from a container's cgroup
// settings, a virt-launcher pod computed from a VMI, a scenario's pod.
// Admit, AdmitWithHints, AdmitVMI and Adopt call it first; the daemon
// (to name the field before deciding) and the NRI plugin (before it
// counts exclusive CPUs) call it too. It refuses what the API server
// never lets through and what would overflow the allocator's and the NRI
// plugin's arithmetic: no UID, no containers or more than
// MaxContainersPerPod, an empty or repeated container name, a negative
// quantity of any resource, CPUs above MaxCPUs, memory or hugepages above
// MaxBytes, not whole bytes, or not a hugepage size.
func CheckPod(pod *corev1.Pod) error {
	if pod == nil {
		return errors.New("pod: nil")
	}
	bad := func(field, format string, args ...any) error {
		return &PodError{Pod: pod.Namespace + "/" + pod.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if pod.UID == "" {
		return bad("metadata.uid", "empty (every pod needs a unique uid)")
	}
	if f, msg := PodNamesProblem(pod.Namespace, pod.Name); msg != "" {
		return &PodError{Pod: strconv.Quote(pod.Namespace + "/" + pod.Name), Field: f, Msg: msg}
	}
	if len(pod.Spec.Containers) == 0 {
		return bad("spec.containers", "the pod has no containers")
	}
	if n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers); n > MaxContainersPerPod {
		return bad("spec.containers", "the pod has %d containers and init containers; the allocator admits at most %d", n, MaxContainersPerPod)
	}
	seen := map[string]bool{}
	for _, list := range []struct {
		field string
		cs    []corev1.Container
	}{{"spec.initContainers", pod.Spec.InitContainers}, {"spec.containers", pod.Spec.Containers}} {
		for i := range list.cs {
			c := &list.cs[i]
			field := fmt.Sprintf("%s[%d]", list.field, i)
			if msg := containerNameProblem(c.Name, seen); msg != "" {
				return bad(field+".name", "%s", msg)
			}
			for _, rl := range []struct {
				kind string
				list corev1.ResourceList
			}{{"limits", c.Resources.Limits}, {"requests", c.Resources.Requests}} {
				if f, msg := resourcesProblem(rl.list); msg != "" {
					return bad(field+".resources."+rl.kind+"."+f, "%s", msg)
				}
			}
		}
	}
	if f, msg := resourcesProblem(pod.Spec.Overhead); msg != "" {
		return bad("spec.overhead."+f, "%s", msg)
	}
	if r := pod.Spec.Resources; r != nil {
		for _, rl := range []struct {
			kind string
			list corev1.ResourceList
		}{{"limits", r.Limits}, {"requests", r.Requests}} {
			if f, msg := resourcesProblem(rl.list); msg != "" {
				return bad("spec.resources."+rl.kind+"."+f, "%s", msg)
			}
		}
	}
	return nil
}

// PodNamesProblem says what is wrong with a pod's namespace ("" is
// "default") and name, by Kubernetes' own rules, with the field; "" when
// nothing. Names reach terminals (allocations, admit, simulate) and
// logs: any member of the socket group could admit a pod named with
// ESC, CR or LF and clear an operator's screen or forge rows (#38).
// The NRI plugin admits each container of a pod it places one by one as
// a unit of its own named "<pod>/<container>" (nriplugin/request.go):
// that is a pod name here too when both halves follow their rules.
func PodNamesProblem(namespace, name string) (string, string) {
	pod, container, unit := strings.Cut(name, "/")
	switch {
	case namespace != "" && len(validation.IsDNS1123Label(namespace)) > 0:
		return "metadata.namespace", fmt.Sprintf("%q is not a namespace name: %s", namespace, dns1123Label)
	case name == "":
		return "metadata.name", "empty: every pod needs a name"
	case len(validation.IsDNS1123Subdomain(pod)) > 0:
		return "metadata.name", fmt.Sprintf("%q is not a pod name: at most 253 of lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (a DNS-1123 subdomain), optionally followed by /<container name> for one container placed alone", name)
	case unit && len(validation.IsDNS1123Label(container)) > 0:
		return "metadata.name", fmt.Sprintf("%q is not a pod name: after the '/' of one container placed alone comes its container name, %s", name, dns1123Label)
	}
	return "", ""
}

// dns1123Label is the rule of namespace and container names, in words.
const dns1123Label = "at most 63 of lowercase letters, digits and '-', starting and ending with a letter or digit (a DNS-1123 label)"

// containerNameProblem says what is wrong with a container's name, ""
// when nothing; seen holds the pod's names so far (init containers
// included: kubelet keys containers by name) and gets this one.
func containerNameProblem(name string, seen map[string]bool) string {
	switch {
	case name == "":
		return "empty: every container needs a name"
	case len(validation.IsDNS1123Label(name)) > 0:
		return fmt.Sprintf("%q is not a container name: %s", name, dns1123Label)
	case seen[name]:
		return fmt.Sprintf("%q: the pod has two containers of that name", name)
	}
	seen[name] = true
	return ""
}

// resourcesProblem checks a resource list in name order; it returns the
// first wrong resource's name and what is wrong, "" when nothing.
func resourcesProblem(l corev1.ResourceList) (string, string) {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		if msg := quantityProblem(corev1.ResourceName(n), l[corev1.ResourceName(n)]); msg != "" {
			return n, msg
		}
	}
	return "", ""
}

// quantityProblem says what is wrong with one resource quantity, "" when
// nothing.
func quantityProblem(name corev1.ResourceName, q resource.Quantity) string {
	if q.Sign() < 0 {
		return fmt.Sprintf("%s is negative: a resource quantity is 0 or more", q.String())
	}
	switch {
	case name == corev1.ResourceCPU:
		if q.Cmp(*resource.NewQuantity(MaxCPUs, resource.DecimalSI)) > 0 {
			return fmt.Sprintf("%s CPUs: at most %d (more than any machine has)", q.String(), MaxCPUs)
		}
	case isMemoryResource(name):
		if _, _, err := memoryBytes(name, q); err != nil {
			return err.Error()
		}
	}
	return ""
}

// isMemoryResource says whether the memory manager pins name: memory or
// a hugepages-<size>.
func isMemoryResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// memoryBytes is a memory or hugepages-<size> quantity as the memory
// manager counts it: the resource's canonical name (hugepages-2Mi for
// hugepages-2048Ki) and whole bytes, at most MaxBytes.
func memoryBytes(name corev1.ResourceName, q resource.Quantity) (memorymanager.ResourceName, uint64, error) {
	if size, ok := strings.CutPrefix(string(name), corev1.ResourceHugePagesPrefix); ok {
		b, err := units.ParseBytes(size)
		if err != nil || b == 0 {
			return "", 0, fmt.Errorf("%q is not a hugepage resource (hugepages-<size>, e.g. hugepages-2Mi)", name)
		}
		name = corev1.ResourceName(units.HugepageResource(b))
	}
	b, err := units.QuantityBytes(q)
	if err != nil {
		return "", 0, err
	}
	if msg := bytesProblem(b); msg != "" {
		return "", 0, errors.New(msg)
	}
	return memorymanager.ResourceName(name), b, nil
}

// bytesProblem says what is wrong with an amount of memory, "" when
// nothing: what a pod asks for and what a checkpoint says was pinned.
func bytesProblem(b uint64) string {
	if b > MaxBytes {
		return fmt.Sprintf("%d bytes: at most %d (4Pi, what 52-bit physical addresses reach)", b, MaxBytes)
	}
	return ""
}

// checkDecision applies CheckPod's rules that a decision read back from a
// checkpoint can break: its container count, their names and the bytes
// pinned for each.
func checkDecision(d Decision) error {
	if n := len(d.Containers); n > MaxContainersPerPod {
		return fmt.Errorf("%d containers; the allocator admits at most %d", n, MaxContainersPerPod)
	}
	seen := map[string]bool{}
	for i, c := range d.Containers {
		if msg := containerNameProblem(c.Name, seen); msg != "" {
			return fmt.Errorf("containers[%d].name: %s", i, msg)
		}
		for r, b := range c.Memory {
			if msg := bytesProblem(b); msg != "" {
				return fmt.Errorf("containers[%d].memory[%s]: %s", i, r, msg)
			}
		}
	}
	return nil
}
