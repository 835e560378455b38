package nriplugin

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/containerd/nri/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// container is what NRI says about one container, in Kubernetes terms.
// NRI passes the container's cgroup settings, not its pod spec: kubelet
// writes the CPU request as cpu.shares, the CPU limit as quota/period,
// the memory limit and the hugepage limits, and names the QoS class in
// the pod's cgroup parent. That is enough for the allocator's decisions
// (requests = limits for Guaranteed containers).
type container struct {
	ID        string
	Name      string
	PodUID    types.UID
	Pod       string // namespace/name
	Namespace string
	PodName   string
	Labels    map[string]string // the pod's
	QoS       corev1.PodQOSClass

	CPURequestMilli int64 // from cpu.shares
	CPULimitMilli   int64 // from quota/period; 0 = none
	MemoryLimit     int64 // bytes; 0 = none
	Hugepages       map[corev1.ResourceName]int64

	CPUs string // cpuset.cpus as the request has it ("" = unset)
	Mems string
}

// key is the container's allocation in the daemon: pod UID and container
// name (a restarted container is a new one with the same key).
func (c container) key() types.UID { return types.UID(string(c.PodUID) + "/" + c.Name) }

func fromNRI(pod *api.PodSandbox, ctr *api.Container) (container, error) {
	c := container{ID: ctr.GetId(), Name: ctr.GetName(), PodUID: types.UID(pod.GetUid()), Namespace: pod.GetNamespace(),
		PodName: pod.GetName(), Labels: pod.GetLabels(), Hugepages: map[corev1.ResourceName]int64{}}
	c.Pod = c.Namespace + "/" + c.PodName
	if c.PodUID == "" {
		return c, fmt.Errorf("container %s of pod %s: the pod has no uid", c.Name, c.Pod)
	}
	c.QoS = qosOf(pod.GetLinux().GetCgroupParent())
	res := ctr.GetLinux().GetResources()
	if cpu := res.GetCpu(); cpu != nil {
		c.CPUs, c.Mems = cpu.GetCpus(), cpu.GetMems()
		if s := cpu.GetShares(); s != nil {
			c.CPURequestMilli = sharesToMilli(s.GetValue())
		}
		if q, p := cpu.GetQuota(), cpu.GetPeriod(); q != nil && p != nil && q.GetValue() > 0 && p.GetValue() > 0 {
			c.CPULimitMilli = scale(uint64(q.GetValue()), 1000, 0, p.GetValue())
		}
	}
	if c.QoS == corev1.PodQOSGuaranteed && c.CPULimitMilli == 0 {
		// kubelet leaves the CFS quota off for containers with exclusive
		// CPUs (DisableCPUQuotaWithExclusiveCPUs); a Guaranteed limit is
		// its request, which the shares carry.
		c.CPULimitMilli = c.CPURequestMilli
	}
	if l := res.GetMemory().GetLimit(); l != nil && l.GetValue() > 0 {
		c.MemoryLimit = l.GetValue()
	}
	for _, h := range res.GetHugepageLimits() {
		size, err := pageSizeBytes(h.GetPageSize())
		if err != nil {
			return c, fmt.Errorf("container %s of pod %s: hugepage limit: %w", c.Name, c.Pod, err)
		}
		if h.GetLimit() > 0 { // uint64: past int64 it would wrap negative
			c.Hugepages[corev1.ResourceName(units.HugepageResource(size))] = int64(min(h.GetLimit(), math.MaxInt64))
		}
	}
	// The one gate for what the allocator is given (a negative, absurd or
	// unnamed request), before exclusiveCPUs or anything else counts.
	if err := allocator.CheckPod(c.pod()); err != nil {
		return c, fmt.Errorf("container %s of pod %s: %w", c.Name, c.Pod, err)
	}
	return c, nil
}

// scale is x × mul + add, over div, in 128 bits: cgroup values are uint64
// and int64 that NRI passes as they are, and quota × 1000 wrapped to a
// negative or small CPU limit (a quota of 2^62 µs gave -1000 CPUs). A
// result past int64 stops at MaxInt64, which CheckPod refuses as more
// CPUs than any machine has; never wraps.
func scale(x, mul, add, div uint64) int64 {
	hi, lo := bits.Mul64(x, mul)
	lo, carry := bits.Add64(lo, add, 0)
	hi += carry
	if hi >= div {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, div)
	return int64(min(q, math.MaxInt64))
}

// qosOf reads the QoS class from the pod's cgroup parent, as kubelet
// names it with either cgroup driver: kubepods-besteffort-pod<uid>.slice
// or /kubepods/besteffort/pod<uid>; Guaranteed pods sit in kubepods itself.
func qosOf(cgroupParent string) corev1.PodQOSClass {
	switch {
	case strings.Contains(cgroupParent, "besteffort"):
		return corev1.PodQOSBestEffort
	case strings.Contains(cgroupParent, "burstable"):
		return corev1.PodQOSBurstable
	}
	return corev1.PodQOSGuaranteed
}

// sharesToMilli inverts kubelet's MilliCPUToShares (milli × 1024 / 1000,
// at least 2), rounding to the nearest milli-CPU.
func sharesToMilli(shares uint64) int64 {
	if shares <= 2 {
		return 0
	}
	return scale(shares, 1000, 512, 1024)
}

// pageSizeBytes reads the runtime-spec hugepage size ("2MB", "1GB":
// binary units, as kubelet writes them).
func pageSizeBytes(s string) (uint64, error) {
	for i, unit := range []string{"KB", "MB", "GB", "TB"} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			v, err := strconv.ParseUint(n, 10, 64)
			if err != nil || v == 0 {
				break
			}
			return v << (10 * (i + 1)), nil
		}
	}
	return 0, fmt.Errorf("page size %q: want a size like 2MB or 1GB", s)
}

// exclusiveCPUs is how many CPUs the container gets to itself: a
// Guaranteed container with an integer CPU limit, as kubelet's static CPU
// Manager decides; 0 for the rest (they share).
func (c container) exclusiveCPUs() int {
	if c.QoS != corev1.PodQOSGuaranteed || c.CPULimitMilli <= 0 || c.CPULimitMilli%1000 != 0 {
		return 0
	}
	return int(c.CPULimitMilli / 1000)
}

// pod is the container as the one-container pod the allocator admits
// (container scope). A Guaranteed container asks what it is limited to;
// the others only need to be seen as not Guaranteed (the allocator pins
// nothing for them), since NRI does not say what their requests were.
func (c container) pod() *corev1.Pod {
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	if c.QoS == corev1.PodQOSGuaranteed {
		if c.CPULimitMilli > 0 {
			lim[corev1.ResourceCPU] = *resource.NewMilliQuantity(c.CPULimitMilli, resource.DecimalSI)
		}
		if c.MemoryLimit > 0 {
			lim[corev1.ResourceMemory] = *resource.NewQuantity(c.MemoryLimit, resource.BinarySI)
		}
		for name, v := range c.Hugepages {
			lim[name] = *resource.NewQuantity(v, resource.BinarySI)
		}
		for name, q := range lim {
			req[name] = q
		}
	} else if c.QoS == corev1.PodQOSBurstable {
		req[corev1.ResourceCPU] = *resource.NewMilliQuantity(max(c.CPURequestMilli, 1), resource.DecimalSI)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: c.key(), Namespace: c.Namespace, Name: c.PodName + "/" + c.Name, Labels: c.Labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: c.Name,
			Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}}},
	}
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}
