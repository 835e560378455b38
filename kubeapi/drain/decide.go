package drain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// Action is what a drain does with a pod.
type Action string

// Actions, with the Reasons that go with them.
const (
	// Evict: evicted through the Eviction API (and waited for).
	Evict Action = "evict"
	// Skip: left where it is (DaemonSet, MirrorPod, Terminated).
	Skip Action = "skip"
	// Wait: already being deleted; not evicted again, but waited for
	// (Terminating).
	Wait Action = "wait"
	// Refuse: the drain does not go ahead while it is there (NoController,
	// EmptyDir), unless the option that allows it is given.
	Refuse Action = "refuse"
)

// Reasons of a Decision (docs/apply.md lists them).
const (
	ReasonDaemonSet    = "DaemonSet"    // its DaemonSet would put it back; it goes with the Node
	ReasonMirrorPod    = "MirrorPod"    // a static pod's mirror: the API cannot evict it
	ReasonTerminated   = "Terminated"   // Succeeded or Failed: it holds nothing any more
	ReasonTerminating  = "Terminating"  // being deleted already
	ReasonNoController = "NoController" // nothing recreates it elsewhere
	ReasonEmptyDir     = "EmptyDir"     // its emptyDir data goes with it
	// ReasonMultipleBudgets: more than one PodDisruptionBudget selects it,
	// and the Eviction API refuses to evict such a pod (500), whatever
	// the budgets allow; no flag overrides it.
	ReasonMultipleBudgets = "MultipleBudgets"
)

// PodRef names a pod; UID tells it from a later pod of the same name.
type PodRef struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid,omitempty"`
}

func (p PodRef) String() string { return p.Namespace + "/" + p.Name }

// Decision is what a drain does with one pod, and why.
type Decision struct {
	PodRef
	Action Action `json:"action"`
	// Reason is empty for Evict; for Refuse it is the first reason of
	// Reasons.
	Reason string `json:"reason,omitempty"`
	// Budgets are, for ReasonMultipleBudgets, the budgets that select it.
	Budgets []string `json:"budgets,omitempty"`
}

// Rules are what a drain may evict beyond the pods a controller recreates.
type Rules struct {
	// Force evicts pods no controller manages (kubectl drain --force):
	// they are gone for good.
	Force bool
	// DeleteEmptyDirData evicts pods with emptyDir volumes (kubectl
	// drain --delete-emptydir-data): their data is lost.
	DeleteEmptyDirData bool
}

// Classify decides, for each pod bound to a Node, what a drain does with
// it, in kubectl drain's order: mirror pods, finished pods and DaemonSet
// pods stay; pods being deleted are waited for; pods with emptyDir data or
// no controller are refused unless r allows them; the rest are evicted.
// It is pure; the decisions are sorted by namespace/name.
func Classify(pods []corev1.Pod, r Rules) []Decision {
	out := make([]Decision, 0, len(pods))
	for _, p := range pods {
		d := Decision{PodRef: PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}, Action: Evict}
		switch {
		case p.Annotations[corev1.MirrorPodAnnotationKey] != "":
			d.Action, d.Reason = Skip, ReasonMirrorPod
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			d.Action, d.Reason = Skip, ReasonTerminated
		case controllerKind(p) == "DaemonSet":
			d.Action, d.Reason = Skip, ReasonDaemonSet
		case p.DeletionTimestamp != nil:
			d.Action, d.Reason = Wait, ReasonTerminating
		case hasEmptyDir(p) && !r.DeleteEmptyDirData:
			d.Action, d.Reason = Refuse, ReasonEmptyDir
		case controllerKind(p) == "" && !r.Force:
			d.Action, d.Reason = Refuse, ReasonNoController
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// controllerKind is the kind of the pod's managing controller (the owner
// reference with controller: true), "" when none.
func controllerKind(p corev1.Pod) string {
	if c := metav1.GetControllerOfNoCopy(&p); c != nil {
		return c.Kind
	}
	return ""
}

func hasEmptyDir(p corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil {
			return true
		}
	}
	return false
}

// Select returns the decisions with action a.
func Select(ds []Decision, a Action) []Decision {
	var out []Decision
	for _, d := range ds {
		if d.Action == a {
			out = append(out, d)
		}
	}
	return out
}

// Budgets returns the PodDisruptionBudgets of pdbs that cover pod: those
// of its namespace whose selector matches its labels. As in policy/v1, a
// budget without a selector covers no pod and an empty selector every pod
// of the namespace. It is pure.
func Budgets(pod corev1.Pod, pdbs []policyv1.PodDisruptionBudget) []policyv1.PodDisruptionBudget {
	var out []policyv1.PodDisruptionBudget
	for _, b := range pdbs {
		if b.Namespace != pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil { // the API server validates selectors: not one of its budgets
			continue
		}
		if sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, b)
		}
	}
	return out
}

// BudgetState says how far a budget is from allowing a disruption, from
// its status (which kube-controller-manager's disruption controller
// keeps): "needs 3 healthy pods, has 3, allows 0 disruptions".
func BudgetState(b policyv1.PodDisruptionBudget) string {
	s := b.Status
	if s.ObservedGeneration < b.Generation {
		return "its status is not computed yet (kube-controller-manager's disruption controller)"
	}
	return fmt.Sprintf("needs %d healthy pods, has %d, allows %d disruptions", s.DesiredHealthy, s.CurrentHealthy, s.DisruptionsAllowed)
}

// Backoff bounds, in Backoff: the first retry waits FirstBackoff, each next
// one twice as long, at most MaxBackoff.
const (
	FirstBackoff = time.Second
	MaxBackoff   = 10 * time.Second
)

// Backoff is how long to wait before retry round (1, 2, …) of the
// evictions a budget refused: FirstBackoff doubled each round up to
// MaxBackoff, or the server's Retry-After when longer, and never past the
// deadline (left is the time until it; 0 or less: no wait). It is pure.
func Backoff(round int, retryAfter, left time.Duration) time.Duration {
	d := FirstBackoff
	for i := 1; i < round && d < MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, MaxBackoff)
	d = max(d, retryAfter)
	return max(0, min(d, left))
}

// MaxNamed is how many names Name lists before it counts the rest.
const MaxNamed = 5

// Name lists names for a message: all of them up to MaxNamed, else the
// first MaxNamed and how many more ("a, b, c, d, e and 3 more").
func Name(names []string) string {
	if len(names) <= MaxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:MaxNamed], ", "), len(names)-MaxNamed)
}

// Refusal is the error of a drain that cannot go ahead: pods are bound to
// Node that it may not evict. It names them, grouped by reason, and says
// what would allow each group.
type Refusal struct {
	Node string
	Pods []Decision // the refused decisions
}

func (e *Refusal) Error() string {
	by := map[string][]string{}
	for _, d := range e.Pods {
		by[d.Reason] = append(by[d.Reason], d.String())
	}
	var parts []string
	if ps := by[ReasonNoController]; len(ps) > 0 {
		parts = append(parts, fmt.Sprintf("%d pods no controller manages, which would be gone for good (%s): --force evicts them", len(ps), Name(ps)))
	}
	if ps := by[ReasonEmptyDir]; len(ps) > 0 {
		parts = append(parts, fmt.Sprintf("%d pods with emptyDir volumes, whose data would be lost (%s): --delete-emptydir-data evicts them", len(ps), Name(ps)))
	}
	var multi []string
	for _, d := range e.Pods {
		if d.Reason == ReasonMultipleBudgets {
			multi = append(multi, fmt.Sprintf("%s (%s)", d, strings.Join(d.Budgets, ", ")))
		}
	}
	if len(multi) > 0 {
		parts = append(parts, fmt.Sprintf("%d pods that more than one PodDisruptionBudget selects, which the Eviction API refuses to evict (%s): make one budget select each pod", len(multi), Name(multi)))
	}
	return fmt.Sprintf("Node %s cannot be drained: %s", e.Node, strings.Join(parts, "; "))
}
