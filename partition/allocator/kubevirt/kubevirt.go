// Package kubevirt computes the virt-launcher pod of a KubeVirt
// VirtualMachineInstance: the guest memory plus KubeVirt's memory
// overhead, as hugepages when the VMI asks for them. Manifests are read
// with a minimal struct of the fields that matter; kubevirt.io modules are
// deliberately not imported.
package kubevirt

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/numa/units"
)

// Overhead formulas.
const (
	// OverheadCurrent is current KubeVirt's GetMemoryOverhead (the default),
	// as written down in the project's multi-kubelet notes: guest/512 +
	// 220Mi fixed (monitor 25, launcher 100, virtlogd 25, virtqemud 40,
	// qemu 30) + 8Mi per vCPU (sockets×cores×threads, else the CPU limit or
	// request rounded up, else 1) + 8Mi IOThread + 32Mi video (unless
	// autoattachGraphicsDevice: false) + 1Gi with VFIO devices (gpus,
	// hostDevices, SR-IOV interfaces) + 100Mi with dedicatedCpuPlacement or
	// Guaranteed QoS + 53Mi with a TPM + 256Mi with SEV + 100Mi once and
	// 10Mi per probe with liveness/readiness probes.
	OverheadCurrent = "current"
	// OverheadV026 is KubeVirt v0.26's: guest/512 + 128M fixed + 8Mi per
	// vCPU core + 8Mi IOThread + 16Mi video unless autoattachGraphicsDevice
	// is false.
	OverheadV026 = "v0.26"
)

// VMI is the part of a VirtualMachineInstance the overhead depends on.
type VMI struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string    `json:"name"`
		Namespace string    `json:"namespace"`
		UID       types.UID `json:"uid"`
	} `json:"metadata"`
	Spec struct {
		Domain         Domain           `json:"domain"`
		LivenessProbe  *json.RawMessage `json:"livenessProbe"`
		ReadinessProbe *json.RawMessage `json:"readinessProbe"`
	} `json:"spec"`
}

// Domain is spec.domain.
type Domain struct {
	CPU *struct {
		Cores                 uint32 `json:"cores"`
		Sockets               uint32 `json:"sockets"`
		Threads               uint32 `json:"threads"`
		DedicatedCPUPlacement bool   `json:"dedicatedCpuPlacement"`
	} `json:"cpu"`
	Memory *struct {
		Guest     *resource.Quantity `json:"guest"`
		Hugepages *struct {
			PageSize string `json:"pageSize"`
		} `json:"hugepages"`
	} `json:"memory"`
	Resources struct {
		Requests corev1.ResourceList `json:"requests"`
		Limits   corev1.ResourceList `json:"limits"`
	} `json:"resources"`
	Devices struct {
		AutoattachGraphicsDevice *bool             `json:"autoattachGraphicsDevice"`
		GPUs                     []json.RawMessage `json:"gpus"`
		HostDevices              []json.RawMessage `json:"hostDevices"`
		Interfaces               []struct {
			SRIOV *json.RawMessage `json:"sriov"`
		} `json:"interfaces"`
		TPM *json.RawMessage `json:"tpm"`
	} `json:"devices"`
	LaunchSecurity *struct {
		SEV *json.RawMessage `json:"sev"`
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
	return &v, nil
}

// GuestMemory is spec.domain.resources.requests.memory, else
// spec.domain.memory.guest.
func (v *VMI) GuestMemory() (resource.Quantity, error) {
	if q, ok := v.Spec.Domain.Resources.Requests[corev1.ResourceMemory]; ok {
		return q, nil
	}
	if m := v.Spec.Domain.Memory; m != nil && m.Guest != nil {
		return *m.Guest, nil
	}
	return resource.Quantity{}, errors.New("VirtualMachineInstance: neither spec.domain.resources.requests.memory nor spec.domain.memory.guest is set")
}

func (v *VMI) vcpus(coresOnly bool) int64 {
	c := v.Spec.Domain.CPU
	if c == nil || (c.Cores == 0 && c.Sockets == 0 && c.Threads == 0) {
		if coresOnly {
			return 1
		}
		// No topology: KubeVirt sizes the guest from the CPU limit, else
		// the request, rounded up.
		r := v.Spec.Domain.Resources
		for _, l := range []corev1.ResourceList{r.Limits, r.Requests} {
			if q, ok := l[corev1.ResourceCPU]; ok {
				return max((q.MilliValue()+999)/1000, 1)
			}
		}
		return 1
	}
	cores, sockets, threads := int64(max(c.Cores, 1)), int64(max(c.Sockets, 1)), int64(max(c.Threads, 1))
	if coresOnly {
		return int64(c.Cores)
	}
	return cores * sockets * threads
}

func (v *VMI) dedicated() bool {
	return v.Spec.Domain.CPU != nil && v.Spec.Domain.CPU.DedicatedCPUPlacement
}

// guaranteed is KubeVirt's "wants QoS Guaranteed": CPU and memory limits
// set and equal to their requests (or requests unset).
func (v *VMI) guaranteed() bool {
	r := v.Spec.Domain.Resources
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		lim, ok := r.Limits[name]
		if !ok {
			return false
		}
		if req, ok := r.Requests[name]; ok && req.Cmp(lim) != 0 {
			return false
		}
	}
	return true
}

func (v *VMI) vfio() bool {
	d := v.Spec.Domain.Devices
	if len(d.GPUs) > 0 || len(d.HostDevices) > 0 {
		return true
	}
	for _, i := range d.Interfaces {
		if i.SRIOV != nil {
			return true
		}
	}
	return false
}

// Overhead is KubeVirt's memory overhead of the VMI, computed with
// Kubernetes quantities as KubeVirt does: the page-table term is
// ScaledValue(guest, kilo) (rounded up) ×1000 / 512.
func Overhead(v *VMI, formula string) (resource.Quantity, error) {
	guest, err := v.GuestMemory()
	if err != nil {
		return resource.Quantity{}, err
	}
	overhead := resource.NewScaledQuantity(0, resource.Kilo)
	pagetables := resource.NewScaledQuantity(guest.ScaledValue(resource.Kilo), resource.Kilo)
	pagetables.Set(pagetables.Value() / 512)
	overhead.Add(*pagetables)
	mib := int64(1 << 20)
	switch formula {
	case OverheadV026:
		overhead.Add(resource.MustParse("128M"))
		overhead.Add(*resource.NewQuantity(8*mib*v.vcpus(true), resource.BinarySI))
	case OverheadCurrent, "":
		overhead.Add(resource.MustParse("220Mi"))
		overhead.Add(*resource.NewQuantity(8*mib*v.vcpus(false), resource.BinarySI))
		if v.vfio() {
			overhead.Add(resource.MustParse("1Gi"))
		}
		if v.dedicated() || v.guaranteed() {
			overhead.Add(resource.MustParse("100Mi"))
		}
		if v.Spec.Domain.Devices.TPM != nil {
			overhead.Add(resource.MustParse("53Mi"))
		}
		if ls := v.Spec.Domain.LaunchSecurity; ls != nil && ls.SEV != nil {
			overhead.Add(resource.MustParse("256Mi"))
		}
		if probes := countNonNil(v.Spec.LivenessProbe, v.Spec.ReadinessProbe); probes > 0 {
			overhead.Add(*resource.NewQuantity((100+10*int64(probes))*mib, resource.BinarySI))
		}
	default:
		return resource.Quantity{}, fmt.Errorf("kubevirt overhead formula %q: allowed are %s, %s", formula, OverheadCurrent, OverheadV026)
	}
	overhead.Add(resource.MustParse("8Mi")) // IOThread
	if a := v.Spec.Domain.Devices.AutoattachGraphicsDevice; a == nil || *a {
		video := "16Mi" // v0.26's VGA
		if formula != OverheadV026 {
			video = "32Mi"
		}
		overhead.Add(resource.MustParse(video))
	}
	return *overhead, nil
}

func countNonNil(ps ...*json.RawMessage) int {
	n := 0
	for _, p := range ps {
		if p != nil {
			n++
		}
	}
	return n
}

// LauncherPod returns the virt-launcher pod of a VMI manifest: one
// "compute" container requesting memory = guest + overhead, or, with
// spec.domain.memory.hugepages.pageSize, hugepages-<size> = guest and
// memory = overhead. CPU requests and limits are the VMI's; with
// dedicatedCpuPlacement and no CPU given, the vCPU count. Limits equal
// requests for memory and hugepages when the VMI sets a memory limit or
// dedicated CPUs, which makes the pod Guaranteed when its CPUs are.
func LauncherPod(manifest []byte, formula string) (*corev1.Pod, error) {
	v, err := Parse(manifest)
	if err != nil {
		return nil, err
	}
	if v.Metadata.UID == "" {
		return nil, fmt.Errorf("VirtualMachineInstance %s: metadata.uid is empty (the launcher pod needs a unique uid)", v.Metadata.Name)
	}
	overhead, err := Overhead(v, formula)
	if err != nil {
		return nil, err
	}
	guest, _ := v.GuestMemory()
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	d := v.Spec.Domain
	if m := d.Memory; m != nil && m.Hugepages != nil && m.Hugepages.PageSize != "" {
		size, err := units.ParseBytes(m.Hugepages.PageSize)
		if err != nil || size == 0 {
			return nil, fmt.Errorf("VirtualMachineInstance %s: spec.domain.memory.hugepages.pageSize %q: %v", v.Metadata.Name, m.Hugepages.PageSize, err)
		}
		req[corev1.ResourceName(units.HugepageResource(size))] = guest
		req[corev1.ResourceMemory] = overhead
	} else {
		mem := guest.DeepCopy()
		mem.Add(overhead)
		req[corev1.ResourceMemory] = mem
	}
	if q, ok := d.Resources.Requests[corev1.ResourceCPU]; ok {
		req[corev1.ResourceCPU] = q
	}
	if q, ok := d.Resources.Limits[corev1.ResourceCPU]; ok {
		lim[corev1.ResourceCPU] = q
	}
	if v.dedicated() {
		if _, ok := req[corev1.ResourceCPU]; !ok {
			req[corev1.ResourceCPU] = *resource.NewQuantity(v.vcpus(false), resource.DecimalSI)
		}
		if _, ok := lim[corev1.ResourceCPU]; !ok {
			lim[corev1.ResourceCPU] = req[corev1.ResourceCPU]
		}
	}
	if _, ok := d.Resources.Limits[corev1.ResourceMemory]; ok || v.dedicated() {
		for name, q := range req {
			if name != corev1.ResourceCPU {
				lim[name] = q
			}
		}
	}
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-" + v.Metadata.Name, Namespace: v.Metadata.Namespace, UID: v.Metadata.UID},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "compute",
			Resources: corev1.ResourceRequirements{Requests: req, Limits: lim},
		}}},
	}, nil
}
