package allocator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// Adopt records a pod that was placed without this allocator deciding:
// by kubelet's own managers (the allocator mirrors them), or by the
// allocator before a restart whose checkpoint lost it (the runtime is
// then the truth). Each pinned container's memory is charged on the
// nodes given for it, as the Memory Manager charges a hint; containers
// not named, and pods that are not Guaranteed, are recorded unpinned.
// Error when the memory does not fit there or the pod is already known.
func (a *Allocator) Adopt(pod *corev1.Pod, nodes map[string]bitmask.NodeSet) (Decision, error) {
	p, d, pinned, err := a.newPod(pod)
	if err != nil {
		return Decision{}, err
	}
	for _, c := range p.Containers() {
		set, ok := nodes[c.Name]
		if !pinned || !ok || set.IsEmpty() {
			continue
		}
		hint := topologymanager.Hint{Affinity: &set, Preferred: true}
		if reason := a.allocate(p, c, pinned, hint, &d); reason != "" {
			a.mm.RemovePod(p.UID)
			return Decision{}, fmt.Errorf("pod %s container %q on nodes %s: %s", d.Pod, c.Name, set, reason)
		}
		// The Memory Manager extends a hint that does not fit; the
		// container runs where it runs, so that is an error here.
		if got := d.Containers[len(d.Containers)-1].NUMANodes; got != set {
			a.mm.RemovePod(p.UID)
			return Decision{}, fmt.Errorf("pod %s container %q: its memory does not fit on nodes %s where it runs (it would need %s)", d.Pod, c.Name, set, got)
		}
	}
	a.mm.StartContainers(p)
	d.Admitted, d.Pinned = true, pinned
	a.pods[pod.UID] = d
	return d, nil
}
