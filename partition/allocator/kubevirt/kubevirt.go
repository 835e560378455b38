// Package kubevirt computes the virt-launcher pod of a KubeVirt
// VirtualMachineInstance: the guest memory plus KubeVirt's memory
// overhead, as hugepages when the VMI asks for them. Manifests are read
// with a minimal struct of the fields that matter; kubevirt.io modules are
// deliberately not imported. The formulas are in overhead.go.
package kubevirt

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
)

// VMI is the part of a VirtualMachineInstance the launcher pod depends on.
type VMI struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string    `json:"name"`
		Namespace string    `json:"namespace"`
		UID       types.UID `json:"uid"`
	} `json:"metadata"`
	Spec struct {
		Domain Domain `json:"domain"`
		// Architecture is spec.architecture (amd64, arm64, s390x).
		Architecture   string   `json:"architecture"`
		LivenessProbe  *Probe   `json:"livenessProbe"`
		ReadinessProbe *Probe   `json:"readinessProbe"`
		Volumes        []Volume `json:"volumes"`
	} `json:"spec"`
}

// Probe is a VMI liveness or readiness probe; only its kind matters.
type Probe struct {
	Exec *json.RawMessage `json:"exec"`
}

// Volume is an entry of spec.volumes; only its kind matters.
type Volume struct {
	DownwardMetrics *json.RawMessage `json:"downwardMetrics"`
}

// Domain is spec.domain.
type Domain struct {
	CPU *struct {
		Cores                 uint32 `json:"cores"`
		Sockets               uint32 `json:"sockets"`
		Threads               uint32 `json:"threads"`
		DedicatedCPUPlacement bool   `json:"dedicatedCpuPlacement"`
		IsolateEmulatorThread bool   `json:"isolateEmulatorThread"`
	} `json:"cpu"`
	Memory *struct {
		Guest     *resource.Quantity `json:"guest"`
		Hugepages *struct {
			PageSize string `json:"pageSize"`
		} `json:"hugepages"`
		ReservedOverhead *struct {
			AddedOverhead *resource.Quantity `json:"addedOverhead"`
		} `json:"reservedOverhead"`
	} `json:"memory"`
	Resources struct {
		Requests                corev1.ResourceList `json:"requests"`
		Limits                  corev1.ResourceList `json:"limits"`
		OvercommitGuestOverhead bool                `json:"overcommitGuestOverhead"`
	} `json:"resources"`
	Devices struct {
		AutoattachGraphicsDevice *bool             `json:"autoattachGraphicsDevice"`
		GPUs                     []json.RawMessage `json:"gpus"`
		HostDevices              []json.RawMessage `json:"hostDevices"`
		Interfaces               []struct {
			SRIOV        *json.RawMessage `json:"sriov"`
			PasstBinding *json.RawMessage `json:"passtBinding"`
		} `json:"interfaces"`
		TPM *struct {
			Enabled *bool `json:"enabled"`
		} `json:"tpm"`
	} `json:"devices"`
	LaunchSecurity *struct {
		SEV *json.RawMessage `json:"sev"`
		SNP *json.RawMessage `json:"snp"`
	} `json:"launchSecurity"`
}

// Parse reads a VMI manifest (JSON or YAML).
func Parse(manifest []byte) (*VMI, error) {
	var v VMI
	if err := yaml.Unmarshal(manifest, &v); err != nil {
		return nil, fmt.Errorf("VirtualMachineInstance manifest: %w", err)
	}
	if v.Kind != "VirtualMachineInstance" {
		return nil, fmt.Errorf("VirtualMachineInstance manifest: kind %q: only VirtualMachineInstance is accepted", v.Kind)
	}
	if !strings.HasPrefix(v.APIVersion, "kubevirt.io/") {
		return nil, fmt.Errorf("VirtualMachineInstance manifest: apiVersion %q: want kubevirt.io/<version>", v.APIVersion)
	}
	if v.Metadata.Name == "" {
		return nil, errors.New("VirtualMachineInstance manifest: metadata.name is empty")
	}
	if n, ok := v.topologyVCPUs(); ok && n > bitmask.MaxCPUs {
		c := v.Spec.Domain.CPU
		return nil, fmt.Errorf("VirtualMachineInstance %s: spec.domain.cpu: %d cores × %d sockets × %d threads is more vCPUs than any machine has CPUs (at most %d)",
			v.Metadata.Name, c.Cores, c.Sockets, c.Threads, bitmask.MaxCPUs)
	}
	return &v, nil
}

// memoryQuantity returns a memory quantity of the VMI and whether it is
// set; a negative one is an error naming field.
func memoryQuantity(q *resource.Quantity, field string) (resource.Quantity, bool, error) {
	if q == nil {
		return resource.Quantity{}, false, nil
	}
	if q.Sign() < 0 {
		return resource.Quantity{}, false, fmt.Errorf("%s %s: must not be negative", field, q.String())
	}
	return *q, true, nil
}

func listQuantity(l corev1.ResourceList, name corev1.ResourceName) *resource.Quantity {
	if q, ok := l[name]; ok {
		return &q
	}
	return nil
}

// memory is the VMI's memory as the launcher pod sees it.
type memory struct {
	request resource.Quantity  // the pod's memory request before overhead
	limit   *resource.Quantity // the pod's memory limit before overhead, nil = none
	guest   *resource.Quantity // spec.domain.memory.guest, nil = unset
}

// podMemory follows KubeVirt v1.9.0 renderresources.go: WithMemoryRequests
// takes the memory request, else the limit (a limits-only VMI is sized by
// its limit), else memory.guest; WithCPUPinning sets the limit to the
// request with dedicated CPUs.
func (v *VMI) podMemory() (memory, error) {
	r := v.Spec.Domain.Resources
	req, hasReq, err := memoryQuantity(listQuantity(r.Requests, corev1.ResourceMemory), "spec.domain.resources.requests.memory")
	if err != nil {
		return memory{}, err
	}
	lim, hasLim, err := memoryQuantity(listQuantity(r.Limits, corev1.ResourceMemory), "spec.domain.resources.limits.memory")
	if err != nil {
		return memory{}, err
	}
	var m memory
	if mm := v.Spec.Domain.Memory; mm != nil {
		g, ok, err := memoryQuantity(mm.Guest, "spec.domain.memory.guest")
		if err != nil {
			return memory{}, err
		}
		if ok {
			m.guest = &g
		}
	}
	switch {
	case hasReq && !req.IsZero():
		m.request = req
	case hasLim && !lim.IsZero():
		m.request = lim
	case m.guest != nil && !m.guest.IsZero():
		m.request = *m.guest
	default:
		return memory{}, errors.New("none of spec.domain.resources.requests.memory, spec.domain.resources.limits.memory, spec.domain.memory.guest is set")
	}
	if hasLim {
		m.limit = &lim
	}
	if v.dedicated() {
		m.limit = &m.request
	}
	return m, nil
}

// GuestMemory is the memory the VMI is sized by:
// spec.domain.resources.requests.memory, else
// spec.domain.resources.limits.memory, else spec.domain.memory.guest.
func (v *VMI) GuestMemory() (resource.Quantity, error) {
	m, err := v.podMemory()
	return m.request, err
}

// vcpus is KubeVirt's vCPU count: sockets×cores×threads (unset ones
// count 1); without a topology the VMI webhook (SetDefaultGuestCPUTopology)
// sets sockets to the CPU limit, else the request, rounded up, else 1.
func (v *VMI) vcpus() int64 {
	if n, ok := v.topologyVCPUs(); ok {
		return int64(n) // at most bitmask.MaxCPUs: Parse refused more
	}
	r := v.Spec.Domain.Resources
	for _, l := range []corev1.ResourceList{r.Limits, r.Requests} {
		if q, ok := l[corev1.ResourceCPU]; ok {
			// Past int64 Value is garbage (a wrapped count): above
			// MaxCPUs the count is MaxCPUs+1, which the allocator's
			// CheckPod refuses as it refuses the quantity itself.
			if q.Cmp(*resource.NewQuantity(bitmask.MaxCPUs, resource.DecimalSI)) > 0 {
				return bitmask.MaxCPUs + 1
			}
			return max(q.Value(), 1) // Value rounds up
		}
	}
	return 1
}

// topologyVCPUs is cores × sockets × threads when spec.domain.cpu sets
// any of them (each unset one counting 1), computed without wrapping:
// three uint32s multiply past 2^64 (2^22 × 2^21 × 2^21 wrapped to 0).
func (v *VMI) topologyVCPUs() (uint64, bool) {
	c := v.Spec.Domain.CPU
	if c == nil || (c.Cores == 0 && c.Sockets == 0 && c.Threads == 0) {
		return 0, false
	}
	n := uint64(max(c.Cores, 1)) * uint64(max(c.Sockets, 1)) // < 2^64
	if hi, lo := bits.Mul64(n, uint64(max(c.Threads, 1))); hi == 0 {
		return lo, true
	}
	return math.MaxUint64, true
}

func (v *VMI) dedicated() bool {
	return v.Spec.Domain.CPU != nil && v.Spec.Domain.CPU.DedicatedCPUPlacement
}

// LauncherLabel and LauncherLabelValue mark a virt-launcher pod, as
// virt-controller labels every pod it creates for a VMI
// (kubevirt.io: virt-launcher, pkg/virt-controller/services/template.go).
const (
	LauncherLabel      = "kubevirt.io"
	LauncherLabelValue = "virt-launcher"
)

// IsLauncherPod says whether a pod's labels are a virt-launcher pod's.
func IsLauncherPod(labels map[string]string) bool { return labels[LauncherLabel] == LauncherLabelValue }

// LauncherPod returns the virt-launcher pod of a VMI manifest with the
// given formula; see LauncherPodWithOptions.
func LauncherPod(manifest []byte, formula string) (*corev1.Pod, error) {
	return LauncherPodWithOptions(manifest, Options{Formula: formula})
}

// LauncherPodWithOptions returns the virt-launcher pod of a VMI manifest:
// one "compute" container, its resources as KubeVirt v1.9.0's
// renderresources.go renders them.
//
// Memory: request = the VMI's memory (see GuestMemory) + overhead (the
// overhead is left out with resources.overcommitGuestOverhead); limit =
// the VMI's memory limit + overhead, or the request with dedicated CPUs.
// With spec.domain.memory.hugepages.pageSize, hugepages-<size> (request =
// limit) holds the VMI's memory, capped at memory.guest, and memory
// holds the overhead plus what exceeds memory.guest.
//
// CPU: with dedicatedCpuPlacement, request = limit = the vCPU count, plus
// one with isolateEmulatorThread; otherwise the VMI's request (else its
// limit) and limit.
func LauncherPodWithOptions(manifest []byte, o Options) (*corev1.Pod, error) {
	v, err := Parse(manifest)
	if err != nil {
		return nil, err
	}
	if v.Metadata.UID == "" {
		return nil, fmt.Errorf("VirtualMachineInstance %s: metadata.uid is empty (the launcher pod needs a unique uid)", v.Metadata.Name)
	}
	overhead, err := OverheadWithOptions(v, o)
	if err != nil {
		return nil, fmt.Errorf("VirtualMachineInstance %s: %w", v.Metadata.Name, err)
	}
	m, err := v.podMemory()
	if err != nil {
		return nil, fmt.Errorf("VirtualMachineInstance %s: %w", v.Metadata.Name, err)
	}
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	if mm := v.Spec.Domain.Memory; mm != nil && mm.Hugepages != nil && mm.Hugepages.PageSize != "" {
		size, err := units.ParseBytes(mm.Hugepages.PageSize)
		if err != nil || size == 0 {
			return nil, fmt.Errorf("VirtualMachineInstance %s: spec.domain.memory.hugepages.pageSize %q: %v", v.Metadata.Name, mm.Hugepages.PageSize, err)
		}
		hugepagesMemory(m, overhead, corev1.ResourceName(units.HugepageResource(size)), req, lim)
	} else {
		mem := m.request.DeepCopy()
		if !v.Spec.Domain.Resources.OvercommitGuestOverhead {
			mem.Add(overhead)
		}
		req[corev1.ResourceMemory] = mem
		if m.limit != nil {
			l := m.limit.DeepCopy()
			l.Add(overhead)
			lim[corev1.ResourceMemory] = l
		}
	}
	v.podCPU(req, lim)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-" + v.Metadata.Name, Namespace: v.Metadata.Namespace, UID: v.Metadata.UID,
			Labels: map[string]string{LauncherLabel: LauncherLabelValue}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "compute",
			Resources: corev1.ResourceRequirements{Requests: req, Limits: lim},
		}}},
	}, nil
}

// hugepagesMemory is KubeVirt v1.9.0's WithHugePages: the guest is
// backed by hugepages, and memory beyond memory.guest (request or limit
// larger than the guest) is charged to memory with the overhead.
func hugepagesMemory(m memory, overhead resource.Quantity, hp corev1.ResourceName, req, lim corev1.ResourceList) {
	pages := m.request
	if m.guest != nil && m.request.Cmp(*m.guest) > 0 {
		pages = *m.guest
	}
	req[hp], lim[hp] = pages, pages
	beyondGuest := func(q resource.Quantity) resource.Quantity {
		d := *resource.NewScaledQuantity(0, resource.Kilo)
		if m.guest != nil && q.Cmp(*m.guest) > 0 {
			d.Add(q)
			d.Sub(*m.guest)
		}
		d.Add(overhead)
		return d
	}
	req[corev1.ResourceMemory] = beyondGuest(m.request)
	if m.limit != nil {
		lim[corev1.ResourceMemory] = beyondGuest(*m.limit)
	}
}

// podCPU is KubeVirt v1.9.0's WithCPUPinning for dedicated CPUs (the vCPU
// count replaces the VMI's CPU resources; isolateEmulatorThread adds a
// CPU for the emulator thread) and otherwise the VMI webhook's
// setDefaultResourceRequests (a CPU limit without request is also the
// request).
func (v *VMI) podCPU(req, lim corev1.ResourceList) {
	if v.dedicated() {
		n := v.vcpus()
		if v.Spec.Domain.CPU.IsolateEmulatorThread {
			n++
		}
		req[corev1.ResourceCPU] = *resource.NewQuantity(n, resource.DecimalSI)
		lim[corev1.ResourceCPU] = *resource.NewQuantity(n, resource.DecimalSI)
		return
	}
	r := v.Spec.Domain.Resources
	if q, ok := r.Limits[corev1.ResourceCPU]; ok {
		lim[corev1.ResourceCPU] = q
		req[corev1.ResourceCPU] = q
	}
	if q, ok := r.Requests[corev1.ResourceCPU]; ok && !q.IsZero() {
		req[corev1.ResourceCPU] = q
	}
}
