package kubevirt

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Overhead formulas. Each follows one KubeVirt release term by term;
// docs/allocator.md lists the terms.
const (
	// OverheadCurrent (the default) follows KubeVirt v1.9.0: the KVM
	// backend's GetMemoryOverhead (pkg/hypervisor/kvm/hypervisorbackend.go)
	// plus the network term of CalculateMemoryOverhead
	// (pkg/virt-controller/services/template.go): requests.memory/512
	// (page tables) + 220Mi fixed (virt-launcher-monitor 25, virt-launcher
	// 100, virtlogd 25, virtqemud 40, qemu 30) + 8Mi per vCPU + 8Mi
	// IOThread + 32Mi video + 128Mi on arm64 + 1Gi with VFIO devices + 1Mi
	// with a downwardMetrics volume + 10Mi per exec probe and 100Mi once +
	// 256Mi with SEV or SNP + 53Mi with an enabled TPM + 100Mi with
	// dedicated CPUs or Guaranteed QoS + memory.reservedOverhead.addedOverhead,
	// all scaled by additionalGuestMemoryOverheadRatio, then + 250Mi with a
	// passt interface.
	OverheadCurrent = "current"
	// OverheadV026 follows KubeVirt v0.26's getMemoryOverhead
	// (pkg/virt-controller/services/template.go) on the VMI as v0.26's
	// mutating webhook stored it: requests.memory/512 (requests.memory
	// defaulted from the memory limit, else memory.guest, else the
	// hugepages page size) + 128M + 8Mi × cpu.cores (8Mi without a cpu
	// block, 0 for a cpu block without cores) + 8Mi IOThread + 16Mi video.
	OverheadV026 = "v0.26"
)

// Options are the inputs of the overhead that are cluster configuration
// (the KubeVirt CR), not part of the VMI. The zero value is KubeVirt's
// default configuration with the current formula.
type Options struct {
	// Formula is OverheadCurrent ("" means current) or OverheadV026.
	Formula string
	// AdditionalGuestMemoryOverheadRatio is the KubeVirt CR's
	// spec.configuration.additionalGuestMemoryOverheadRatio, a decimal
	// of at least 1 ("" = unset). The current formula scales its
	// overhead by it; v0.26 had no such setting and ignores it.
	AdditionalGuestMemoryOverheadRatio string
	// DefaultArchitecture is the architecture of VMIs without
	// spec.architecture (KubeVirt's webhook fills in the CR's
	// architectureConfiguration.defaultArchitecture, which defaults to
	// the cluster's); "" = amd64. Only arm64 changes the overhead.
	DefaultArchitecture string
}

// Validate checks the options alone, so that a configuration can be
// refused before any VMI arrives.
func (o Options) Validate() error {
	switch o.Formula {
	case "", OverheadCurrent, OverheadV026:
	default:
		return fmt.Errorf("kubevirt overhead formula %q: allowed are %s, %s", o.Formula, OverheadCurrent, OverheadV026)
	}
	_, err := o.ratio()
	return err
}

// ratio parses AdditionalGuestMemoryOverheadRatio with the rules of
// KubeVirt's CR webhook (validateGuestToRequestHeadroom: a float, not
// below 1); 1 when unset.
func (o Options) ratio() (float64, error) {
	s := o.AdditionalGuestMemoryOverheadRatio
	if s == "" {
		return 1, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("additionalGuestMemoryOverheadRatio %q: not a number", s)
	}
	if math.IsNaN(r) || math.IsInf(r, 0) || r < 1 {
		return 0, fmt.Errorf("additionalGuestMemoryOverheadRatio %q: must be a finite number of at least 1", s)
	}
	return r, nil
}

// Overhead is KubeVirt's memory overhead of the VMI with the given
// formula and KubeVirt's default configuration; see OverheadWithOptions.
func Overhead(v *VMI, formula string) (resource.Quantity, error) {
	return OverheadWithOptions(v, Options{Formula: formula})
}

// OverheadWithOptions is KubeVirt's memory overhead of the VMI, computed
// with Kubernetes quantities as KubeVirt does (the page-table term is
// ScaledValue(requests.memory, kilo), rounded up, ×1000 / 512).
func OverheadWithOptions(v *VMI, o Options) (resource.Quantity, error) {
	if v == nil {
		return resource.Quantity{}, errors.New("VirtualMachineInstance: nil")
	}
	if err := o.Validate(); err != nil {
		return resource.Quantity{}, err
	}
	if o.Formula == OverheadV026 {
		return v.overheadV026()
	}
	// The current formula takes the page tables from requests.memory
	// alone (domain.Resources.Requests.Memory()): memory.guest or a
	// limit does not count, even though they size the guest.
	req, _, err := memoryQuantity(listQuantity(v.Spec.Domain.Resources.Requests, corev1.ResourceMemory), "spec.domain.resources.requests.memory")
	if err != nil {
		return resource.Quantity{}, err
	}
	overhead := resource.NewScaledQuantity(0, resource.Kilo)
	overhead.Add(pagetableMemory(req))
	if err := v.addCurrent(overhead, o); err != nil {
		return resource.Quantity{}, err
	}
	return *overhead, nil
}

func mib(n int64) resource.Quantity { return *resource.NewQuantity(n<<20, resource.BinarySI) }

func (v *VMI) graphics() bool {
	a := v.Spec.Domain.Devices.AutoattachGraphicsDevice
	return a == nil || *a
}

// pagetableMemory is the page-table term both releases compute the
// same way: "pagetableMemory := resource.NewScaledQuantity(
// vmiMemoryReq.ScaledValue(resource.Kilo), resource.Kilo)" (kB, rounded
// up) then "pagetableMemory.Set(pagetableMemory.Value() / 512)".
func pagetableMemory(req resource.Quantity) resource.Quantity {
	p := resource.NewScaledQuantity(req.ScaledValue(resource.Kilo), resource.Kilo)
	p.Set(p.Value() / 512)
	return *p
}

// overheadV026 is KubeVirt v0.26's getMemoryOverhead(domain
// v1.DomainSpec) (pkg/virt-controller/services/template.go), term by
// term, on the domain as v0.26's mutating webhook left it (see
// v026MemoryRequest). The quoted lines are upstream's; the v0.26.0
// module is not on the Go module proxy (403), so they were read from
// kubevirt/kubevirt's history: the template.go whose getMemoryOverhead
// adds "128M" and "coresMemory := uint32(8)" (the last form before the
// vCPU-topology rewrite to 138Mi × sockets×cores×threads), and the
// client-go era (v0.20 on) mutators/vmi-mutator.go.
func (v *VMI) overheadV026() (resource.Quantity, error) {
	d := v.Spec.Domain
	// "vmiMemoryReq := domain.Resources.Requests.Memory()"
	req, err := v.v026MemoryRequest()
	if err != nil {
		return resource.Quantity{}, err
	}
	// "overhead := resource.NewScaledQuantity(0, resource.Kilo)"
	overhead := resource.NewScaledQuantity(0, resource.Kilo)
	// "// Add the memory needed for pagetables (one bit for every 512b of RAM size)"
	overhead.Add(pagetableMemory(req))
	// "overhead.Add(resource.MustParse("128M"))": fixed overhead for
	// shared libraries (128×10^6 bytes, not 128Mi).
	overhead.Add(resource.MustParse("128M"))
	// "coresMemory := uint32(8)"; "if domain.CPU != nil { coresMemory *=
	// domain.CPU.Cores }"; "overhead.Add(resource.MustParse(
	// strconv.Itoa(int(coresMemory)) + "Mi"))": no cpu block counts 8Mi,
	// a cpu block counts 8Mi per core (sockets and threads ignored, 0
	// without cores). The uint32 product wraps past 2^29 cores; Parse
	// refuses a topology above bitmask.MaxCPUs long before.
	coresMemory := uint32(8)
	if d.CPU != nil {
		coresMemory *= d.CPU.Cores
	}
	overhead.Add(mib(int64(coresMemory)))
	// "// static overhead for IOThread"; "overhead.Add(resource.MustParse("8Mi"))"
	overhead.Add(mib(8))
	// "if domain.Devices.AutoattachGraphicsDevice == nil ||
	// *domain.Devices.AutoattachGraphicsDevice == true {
	// overhead.Add(resource.MustParse("16Mi")) }": video RAM.
	if v.graphics() {
		overhead.Add(mib(16))
	}
	// "return overhead": v0.26 has none of the current formula's other
	// terms (no ratio, architecture, probes, TPM, VFIO, QoS ...).
	return *overhead, nil
}

// v026MemoryRequest is requests.memory as getMemoryOverhead saw it in
// v0.26: virt-controller renders the VMI the mutating webhook stored,
// and its setDefaultResourceRequests (mutators/vmi-mutator.go) had
// filled in requests.memory:
//
//	if !resources.Limits.Memory().IsZero() && resources.Requests.Memory().IsZero() {
//		resources.Requests[k8sv1.ResourceMemory] = resources.Limits[k8sv1.ResourceMemory]
//	}
//	if _, exists := resources.Requests[k8sv1.ResourceMemory]; !exists {
//		// memory.guest, else the hugepages page size (resource.ParseQuantity)
//		if memory != nil && memory.Value() > 0 {
//			// overcommit: memory-overcommit of kubevirt-config, default 100
//			resources.Requests[k8sv1.ResourceMemory] = *memory
//
// So a VMI with only memory.guest (or only a memory limit) gets the
// page tables of that memory. The default memory-overcommit (100) is
// assumed; namespace LimitRange defaults and VMI presets, which the
// webhook applies first, are cluster state and not modelled.
func (v *VMI) v026MemoryRequest() (resource.Quantity, error) {
	r := v.Spec.Domain.Resources
	req, hasReq, err := memoryQuantity(listQuantity(r.Requests, corev1.ResourceMemory), "spec.domain.resources.requests.memory")
	if err != nil {
		return resource.Quantity{}, err
	}
	lim, _, err := memoryQuantity(listQuantity(r.Limits, corev1.ResourceMemory), "spec.domain.resources.limits.memory")
	if err != nil {
		return resource.Quantity{}, err
	}
	// A limit replaces a missing or zero request; the request key then
	// exists, so memory.guest no longer counts.
	if !lim.IsZero() && req.IsZero() {
		return lim, nil
	}
	if hasReq {
		return req, nil // an explicit request, even 0, is kept
	}
	if m := v.Spec.Domain.Memory; m != nil {
		var memory *resource.Quantity
		g, ok, err := memoryQuantity(m.Guest, "spec.domain.memory.guest")
		if err != nil {
			return resource.Quantity{}, err
		}
		if ok {
			memory = &g
		}
		if memory == nil && m.Hugepages != nil {
			if size, err := resource.ParseQuantity(m.Hugepages.PageSize); err == nil {
				memory = &size
			}
		}
		if memory != nil && memory.Value() > 0 {
			return *memory, nil
		}
	}
	return resource.Quantity{}, nil // no request: Memory() is 0, no page tables
}

// addCurrent adds the terms of KubeVirt v1.9.0's GetMemoryOverhead (KVM)
// after the page tables, then CalculateMemoryOverhead's network term.
func (v *VMI) addCurrent(overhead *resource.Quantity, o Options) error {
	d := v.Spec.Domain
	overhead.Add(mib(25 + 100 + 25 + 40 + 30)) // monitor, launcher, virtlogd, virtqemud, qemu
	overhead.Add(mib(8 * v.vcpus()))
	overhead.Add(mib(8)) // IOThread
	if v.graphics() {
		overhead.Add(mib(32))
	}
	arch := v.Spec.Architecture
	if arch == "" {
		arch = o.DefaultArchitecture
	}
	if arch == "arm64" {
		overhead.Add(mib(128)) // two 64Mi UEFI pflash devices
	}
	if v.vfio() {
		overhead.Add(mib(1024))
	}
	if v.downwardMetricsVolume() {
		overhead.Add(mib(1))
	}
	// addProbeOverheads: only exec probes run virt-probe.
	execProbes := int64(0)
	for _, p := range []*Probe{v.Spec.LivenessProbe, v.Spec.ReadinessProbe} {
		if p != nil && p.Exec != nil {
			execProbes++
		}
	}
	if execProbes > 0 {
		overhead.Add(mib(100 + 10*execProbes))
	}
	if ls := d.LaunchSecurity; ls != nil && (ls.SEV != nil || ls.SNP != nil) {
		overhead.Add(mib(256))
	}
	if t := d.Devices.TPM; t != nil && (t.Enabled == nil || *t.Enabled) {
		overhead.Add(mib(53)) // swtpm
	}
	if v.dedicated() || v.guaranteed() {
		overhead.Add(mib(100))
	}
	if m := d.Memory; m != nil && m.ReservedOverhead != nil {
		added, ok, err := memoryQuantity(m.ReservedOverhead.AddedOverhead, "spec.domain.memory.reservedOverhead.addedOverhead")
		if err != nil {
			return err
		}
		if ok {
			overhead.Add(added)
		}
	}
	// MultiplyMemory, the last step of GetMemoryOverhead: add
	// int64(kB × (ratio − 1)) kB, kB rounded up.
	r, _ := o.ratio() // validated by the caller
	if r != 1 {
		extra := float64(overhead.ScaledValue(resource.Kilo)) * (r - 1)
		if extra >= math.MaxInt64/1000 {
			return fmt.Errorf("additionalGuestMemoryOverheadRatio %q: the overhead overflows", o.AdditionalGuestMemoryOverheadRatio)
		}
		overhead.Add(*resource.NewScaledQuantity(int64(extra), resource.Kilo))
	}
	// CalculateMemoryOverhead adds the network bindings' memory after the
	// ratio: passt (all ports forwarded).
	for _, i := range d.Devices.Interfaces {
		if i.PasstBinding != nil {
			overhead.Add(mib(250))
			break
		}
	}
	return nil
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

// downwardMetricsVolume is HasDownwardMetricDisk: a downwardMetrics
// volume (memory-backed emptyDir); the virtio-serial device alone adds
// nothing.
func (v *VMI) downwardMetricsVolume() bool {
	for _, vol := range v.Spec.Volumes {
		if vol.DownwardMetrics != nil {
			return true
		}
	}
	return false
}

// guaranteed is KubeVirt's WantsToHaveQOSGuaranteed on the VMI as the
// webhook leaves it: a CPU limit without request is also the request
// (setDefaultResourceRequests), so CPU needs a non-zero request (or
// limit) equal to the limit; memory needs a limit equal to the request,
// or a limit and no request.
func (v *VMI) guaranteed() bool {
	r := v.Spec.Domain.Resources
	zero := func(l corev1.ResourceList, n corev1.ResourceName) bool { q, ok := l[n]; return !ok || q.IsZero() }
	equal := func(n corev1.ResourceName) bool { a, b := r.Requests[n], r.Limits[n]; return a.Cmp(b) == 0 }
	memory := (zero(r.Requests, corev1.ResourceMemory) && !zero(r.Limits, corev1.ResourceMemory)) ||
		(!zero(r.Requests, corev1.ResourceMemory) && equal(corev1.ResourceMemory))
	cpu := !zero(r.Limits, corev1.ResourceCPU) && (zero(r.Requests, corev1.ResourceCPU) || equal(corev1.ResourceCPU))
	return memory && cpu
}
