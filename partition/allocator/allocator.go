package allocator

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator/kubevirt"
	"github.com/numa-partition/numa-partition/partition/policy/memorymanager"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// Scopes (topologyManagerScope).
const (
	ScopeContainer = "container"
	ScopePod       = "pod"
)

// Admission failure reasons, kubelet's.
const (
	ReasonTopologyAffinity = "TopologyAffinityError"
	ReasonUnexpected       = "UnexpectedAdmissionError"
)

// Hints are other providers' hints (CPU manager, device plugins) merged
// with the memory manager's. In container scope Containers[name] is used
// for each container; in pod scope Pod is used once.
type Hints struct {
	Pod        []topologymanager.ProviderHints            `json:"pod,omitempty"`
	Containers map[string][]topologymanager.ProviderHints `json:"containers,omitempty"`
}

// Allocator is one partition's Memory Manager + Topology Manager.
type Allocator struct {
	cfg    Config
	policy topologymanager.Policy
	mm     *memorymanager.Static
	pods   map[types.UID]Decision
}

// New validates cfg and returns an allocator with empty tables.
func New(cfg Config) (*Allocator, error) {
	if cfg.Policy == "" {
		cfg.Policy = topologymanager.PolicyNone
	}
	switch cfg.Scope {
	case "":
		cfg.Scope = ScopeContainer
	case ScopeContainer, ScopePod:
	default:
		return nil, fmt.Errorf("scope %q: allowed are %s, %s", cfg.Scope, ScopeContainer, ScopePod)
	}
	if cfg.KubeVirtOverhead == "" {
		cfg.KubeVirtOverhead = kubevirt.OverheadCurrent
	}
	if err := kubeVirtOptions(cfg).Validate(); err != nil {
		return nil, err
	}
	// Before the policy's own check, so that the error names the field.
	if err := topologymanager.CheckDistances(cfg.Distances); err != nil {
		return nil, err
	}
	mm, err := memorymanager.NewStatic(cfg.Nodes)
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	pol, err := topologymanager.New(topologymanager.Options{
		Policy:        cfg.Policy,
		NUMANodes:     mm.NodeIDs(),
		Distances:     cfg.Distances,
		PolicyOptions: cfg.PolicyOptions,
		TieBreak:      cfg.TieBreak,
		Load:          mm.Load,
	})
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return &Allocator{cfg: cfg, policy: pol, mm: mm, pods: map[types.UID]Decision{}}, nil
}

// Config returns the effective configuration (defaults filled in).
func (a *Allocator) Config() Config { return a.cfg }

// Admit decides for one Pod. A rejection is not an error: Admitted=false
// with a Reason. error is for invalid input and names the field.
// Non-guaranteed pods are admitted unpinned.
func (a *Allocator) Admit(pod *corev1.Pod) (Decision, error) { return a.AdmitWithHints(pod, Hints{}) }

// AdmitVMI computes the virt-launcher pod of a VMI manifest (JSON or YAML)
// with the configured overhead formula, then admits it.
func (a *Allocator) AdmitVMI(manifest []byte) (Decision, error) {
	return a.AdmitVMIWithHints(manifest, Hints{})
}

// kubeVirtOptions are the launcher-pod options of a Config.
func kubeVirtOptions(cfg Config) kubevirt.Options {
	return kubevirt.Options{Formula: cfg.KubeVirtOverhead, AdditionalGuestMemoryOverheadRatio: cfg.KubeVirtOverheadRatio,
		DefaultArchitecture: cfg.KubeVirtDefaultArchitecture}
}

// AdmitVMIWithHints is AdmitVMI with other providers' hints.
func (a *Allocator) AdmitVMIWithHints(manifest []byte, extra Hints) (Decision, error) {
	pod, err := kubevirt.LauncherPodWithOptions(manifest, kubeVirtOptions(a.cfg))
	if err != nil {
		return Decision{}, err
	}
	return a.AdmitWithHints(pod, extra)
}

// newPod checks a pod that is new to the allocator and gives its memory
// manager form, its empty decision and whether its memory is pinned.
func (a *Allocator) newPod(pod *corev1.Pod) (*memorymanager.Pod, Decision, bool, error) {
	if err := CheckPod(pod); err != nil {
		return nil, Decision{}, false, err
	}
	if _, ok := a.pods[pod.UID]; ok {
		return nil, Decision{}, false, fmt.Errorf("pod metadata.uid %q: already admitted (release it first)", pod.UID)
	}
	p, err := toPod(pod)
	if err != nil {
		return nil, Decision{}, false, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	// Pod-level resources need PodLevelResourceManagers (off by default in
	// kubelet 1.37): the memory manager then neither hints nor pins.
	pinned := isGuaranteed(pod) && !podLevelResourcesSet(pod)
	return p, Decision{PodUID: pod.UID, Pod: pod.Namespace + "/" + pod.Name}, pinned, nil
}

// AdmitWithHints is Admit with other providers' hints merged in.
func (a *Allocator) AdmitWithHints(pod *corev1.Pod, extra Hints) (Decision, error) {
	p, d, pinned, err := a.newPod(pod)
	if err != nil {
		return Decision{}, err
	}
	if reason := a.admit(p, a.scopeOf(pod), pinned, extra, &d); reason != "" {
		a.mm.RemovePod(p.UID) // kubelet frees these at its next admission (M11)
		d.Admitted, d.Reason, d.Containers = false, reason, nil
		return d, nil
	}
	a.mm.StartContainers(p)
	d.Admitted, d.Pinned = true, pinned
	a.pods[pod.UID] = d
	return d, nil
}

// scopeOf is the scope a pod is admitted in: the configured one, except
// that a virt-launcher pod is one VM and is always placed as one unit
// (pod scope), so its containers, hugepages and overhead share its nodes.
func (a *Allocator) scopeOf(pod *corev1.Pod) string {
	if kubevirt.IsLauncherPod(pod.Labels) {
		return ScopePod
	}
	return a.cfg.Scope
}

// admit runs the scope; it returns a rejection reason or "".
func (a *Allocator) admit(p *memorymanager.Pod, scope string, pinned bool, extra Hints, d *Decision) string {
	containers := p.Containers()
	if a.policy.Name() == topologymanager.PolicyNone {
		// The none scope never asks for hints; Allocate uses the memory
		// manager's default hint (M12).
		for _, c := range containers {
			if reason := a.allocate(p, c, pinned, topologymanager.DontCare(false), d); reason != "" {
				return a.refused(reason, scope, pinned, c.Requests, nil)
			}
		}
		return ""
	}
	if scope == ScopePod {
		providers := []topologymanager.ProviderHints{nil}
		if pinned {
			providers[0] = a.mm.PodHints(p)
		}
		providers = append(providers, extra.Pod...)
		best, ok := a.policy.Merge(providers)
		if !ok {
			return a.refused(topologyError("pod", best), scope, pinned, memorymanager.PodRequests(p), extra.Pod)
		}
		for _, c := range containers {
			if reason := a.allocate(p, c, pinned, best, d); reason != "" {
				return a.refused(reason, scope, pinned, c.Requests, extra.Pod)
			}
		}
		return ""
	}
	for _, c := range containers {
		providers := []topologymanager.ProviderHints{nil}
		if pinned {
			providers[0] = a.mm.ContainerHints(p, c)
		}
		providers = append(providers, extra.Containers[c.Name]...)
		best, ok := a.policy.Merge(providers)
		if !ok {
			return a.refused(topologyError(fmt.Sprintf("container %q", c.Name), best), scope, pinned, c.Requests, extra.Containers[c.Name])
		}
		if reason := a.allocate(p, c, pinned, best, d); reason != "" {
			return a.refused(reason, scope, pinned, c.Requests, extra.Containers[c.Name])
		}
	}
	return ""
}

// refused is a rejection's reason: kubelet's, first and unchanged (what
// compares with kubelet compares that part), then the policy and scope
// that refused, what the refused container asked (the pod, when pod
// scope's merge refused it) of each memory manager resource and what is free on each NUMA node, and
// the other providers' hints (the CPU manager's):
//
//	UnexpectedAdmissionError: Allocate failed due to [memorymanager] failed to find NUMA nodes to extend the current topology hint, which is unexpected (container "c"); policy best-effort, scope container; hugepages-2Mi: asked 4Mi, free 0 on nodes 0-1 (the partition has no 2Mi pages: host.hugepages); memory: asked 1Gi, free 4Gi on node 0, 5Gi on node 1
//
// The figures are the state the decision was made on: in container
// scope, with the pod's earlier containers' memory still taken.
func (a *Allocator) refused(reason, scope string, pinned bool, req map[ResourceName]uint64, extra []topologymanager.ProviderHints) string {
	parts := []string{reason, "policy " + a.policy.Name() + ", scope " + scope}
	if pinned && len(req) > 0 {
		parts = append(parts, a.mm.Describe(req))
	}
	for _, h := range extra {
		parts = append(parts, describeHints(h)...)
	}
	return strings.Join(parts, "; ")
}

// describeHints is one other provider's hints, resource by resource
// (sorted): "cpu hints: [0] preferred, [0-1]" (the first 8, then how
// many more); "cpu hints: none (no NUMA nodes fit)" for an empty list,
// "cpu hints: any NUMA nodes" for a nil one.
func describeHints(h topologymanager.ProviderHints) []string {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]string, 0, len(names))
	for _, name := range names {
		list := h[name]
		switch {
		case list == nil:
			out = append(out, name+" hints: any NUMA nodes")
		case len(list) == 0:
			out = append(out, name+" hints: none (no NUMA nodes fit)")
		default:
			const shown = 8 // 8 nodes have 255 masks
			hs := make([]string, 0, min(len(list), shown)+1)
			for _, x := range list[:min(len(list), shown)] {
				s := "[nil]"
				if x.Affinity != nil {
					s = "[" + x.Affinity.String() + "]"
				}
				if x.Preferred {
					s += " preferred"
				}
				hs = append(hs, s)
			}
			if len(list) > shown {
				hs = append(hs, fmt.Sprintf("… %d more", len(list)-shown))
			}
			out = append(out, name+" hints: "+strings.Join(hs, ", "))
		}
	}
	return out
}

func topologyError(what string, best topologymanager.Hint) string {
	return fmt.Sprintf("%s: Resources cannot be allocated with Topology locality (%s, best hint %s)", ReasonTopologyAffinity, what, best)
}

func (a *Allocator) allocate(p *memorymanager.Pod, c *memorymanager.Container, pinned bool, hint topologymanager.Hint, d *Decision) string {
	if !pinned {
		return ""
	}
	if err := a.mm.Allocate(p, c, hint); err != nil {
		return fmt.Sprintf("%s: Allocate failed due to %v, which is unexpected (container %q)", ReasonUnexpected, err, c.Name)
	}
	cd := ContainerDecision{Name: c.Name, Memory: map[ResourceName]uint64{}}
	for _, b := range a.mm.ContainerBlocks(p.UID, c.Name) {
		cd.NUMANodes = bitmask.NewNodeSet(b.NUMAAffinity...)
	}
	for name, v := range c.Requests {
		cd.Memory[name] = v
	}
	d.Containers = append(d.Containers, cd)
	return ""
}

// Release frees a pod's memory; false if the pod is unknown.
func (a *Allocator) Release(uid types.UID) (bool, error) {
	if uid == "" {
		return false, errors.New("pod uid: empty")
	}
	if _, ok := a.pods[uid]; !ok {
		return false, nil
	}
	a.mm.RemovePod(string(uid))
	delete(a.pods, uid)
	return true, nil
}

// Allocations returns the admitted pods sorted by UID.
func (a *Allocator) Allocations() []Allocation {
	out := make([]Allocation, 0, len(a.pods))
	for _, d := range a.pods {
		out = append(out, copyDecision(d))
	}
	slices.SortFunc(out, byPodUID)
	return out
}

func byPodUID(x, y Allocation) int { return strings.Compare(string(x.PodUID), string(y.PodUID)) }

func copyDecision(d Decision) Decision {
	c := d
	c.Containers = make([]ContainerDecision, len(d.Containers))
	for i, cd := range d.Containers {
		m := make(map[ResourceName]uint64, len(cd.Memory))
		for k, v := range cd.Memory {
			m[k] = v
		}
		c.Containers[i] = ContainerDecision{Name: cd.Name, NUMANodes: cd.NUMANodes, Memory: m}
	}
	if len(d.Containers) == 0 {
		c.Containers = nil
	}
	return c
}

// StateAfter is State, given prev, a State this allocator returned, and
// changed, every pod admitted or released since: the other pods' entries
// are prev's, shared rather than copied (a State is never written to),
// so that its cost grows with the changes, not with the pods held (the
// daemon builds one per durable write).
func (a *Allocator) StateAfter(prev State, changed map[types.UID]bool) State {
	st := State{Machine: a.mm.Machine(), Allocations: make([]Allocation, 0, len(a.pods)),
		Blocks: make(map[types.UID]map[string][]Block, len(prev.Blocks)+len(changed))}
	for _, d := range prev.Allocations {
		if !changed[d.PodUID] {
			st.Allocations = append(st.Allocations, d)
		}
	}
	for uid, bs := range prev.Blocks {
		if !changed[uid] {
			st.Blocks[uid] = bs
		}
	}
	for uid := range changed {
		d, ok := a.pods[uid]
		if !ok {
			continue
		}
		st.Allocations = append(st.Allocations, copyDecision(d))
		if bs := a.mm.Blocks(string(uid)); len(bs) > 0 {
			st.Blocks[uid] = bs
		}
	}
	if len(changed) > 0 {
		slices.SortFunc(st.Allocations, byPodUID)
	}
	return st
}

// State returns a deep copy of the state.
func (a *Allocator) State() State {
	st := State{Machine: a.mm.Machine(), Allocations: a.Allocations(), Blocks: map[types.UID]map[string][]Block{}}
	for uid := range a.pods {
		if bs := a.mm.Blocks(string(uid)); len(bs) > 0 {
			st.Blocks[uid] = bs
		}
	}
	return st
}
