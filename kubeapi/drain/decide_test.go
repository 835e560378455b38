package drain

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

func owned(kind string) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "x", UID: "o", Controller: &yes}}
}

func pod(name string, f func(p *corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("uid-" + name), OwnerReferences: owned("ReplicaSet")},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if f != nil {
		f(&p)
	}
	return p
}

// TestClassify: kubectl drain's filters, in its order.
func TestClassify(t *testing.T) {
	now := metav1.Now()
	notController := false
	pods := []corev1.Pod{
		pod("rs", nil),
		pod("ds", func(p *corev1.Pod) { p.OwnerReferences = owned("DaemonSet") }),
		pod("mirror", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "Node", Name: "n", Controller: &notController}}
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "abc"}
		}),
		pod("done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded; p.OwnerReferences = nil }),
		pod("failed-emptydir", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}),
		pod("bare", func(p *corev1.Pod) { p.OwnerReferences = nil }),
		// An owner that is not the controller does not recreate it.
		pod("owned-not-controlled", func(p *corev1.Pod) { p.OwnerReferences[0].Controller = &notController }),
		pod("scratch", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}),
		pod("going", func(p *corev1.Pod) { p.DeletionTimestamp = &now; p.OwnerReferences = nil }),
		pod("ds-going", func(p *corev1.Pod) { p.DeletionTimestamp = &now; p.OwnerReferences = owned("DaemonSet") }),
	}
	want := map[string]string{
		"rs": "evict", "ds": "skip DaemonSet", "mirror": "skip MirrorPod", "done": "skip Terminated",
		"failed-emptydir": "skip Terminated", "bare": "refuse NoController", "owned-not-controlled": "refuse NoController",
		"scratch": "refuse EmptyDir", "going": "wait Terminating", "ds-going": "skip DaemonSet",
	}
	check := func(r Rules, over map[string]string) {
		t.Helper()
		got := Classify(pods, r)
		if len(got) != len(pods) {
			t.Fatalf("%d decisions for %d pods", len(got), len(pods))
		}
		for i, d := range got {
			if i > 0 && got[i-1].String() >= d.String() {
				t.Errorf("not sorted: %s before %s", got[i-1], d)
			}
			w := want[d.Name]
			if o, ok := over[d.Name]; ok {
				w = o
			}
			if g := strings.TrimSpace(string(d.Action) + " " + d.Reason); g != w {
				t.Errorf("%+v: %s %q, want %q", r, d.Name, g, w)
			}
			if d.UID != k8stypes.UID("uid-"+d.Name) || d.Namespace != "ns" {
				t.Errorf("%s: ref %+v", d.Name, d.PodRef)
			}
		}
	}
	check(Rules{}, nil)
	check(Rules{Force: true}, map[string]string{"bare": "evict", "owned-not-controlled": "evict"})
	check(Rules{DeleteEmptyDirData: true}, map[string]string{"scratch": "evict"})
	// A bare pod with emptyDir needs both.
	both := []corev1.Pod{pod("b", func(p *corev1.Pod) {
		p.OwnerReferences = nil
		p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	})}
	for r, w := range map[Rules]string{{}: "refuse", {Force: true}: "refuse", {DeleteEmptyDirData: true}: "refuse", {Force: true, DeleteEmptyDirData: true}: "evict"} {
		if got := Classify(both, r)[0].Action; string(got) != w {
			t.Errorf("bare with emptyDir under %+v: %s, want %s", r, got, w)
		}
	}
}

// TestBudgets: a budget covers the pods of its namespace its selector
// matches; nil selects none, {} all.
func TestBudgets(t *testing.T) {
	pdb := func(ns, name string, sel *metav1.LabelSelector) policyv1.PodDisruptionBudget {
		return policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}}
	}
	pdbs := []policyv1.PodDisruptionBudget{
		pdb("ns", "web", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}),
		pdb("other", "web-elsewhere", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}),
		pdb("ns", "nil-selector", nil),
		pdb("ns", "everything", &metav1.LabelSelector{}),
		pdb("ns", "tier", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front", "edge"}}}}),
		pdb("ns", "invalid", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Sometimes"}}}),
	}
	names := func(p corev1.Pod) string {
		var s []string
		for _, b := range Budgets(p, pdbs) {
			s = append(s, b.Name)
		}
		return strings.Join(s, ",")
	}
	for labels, want := range map[string]string{
		"app=web":           "web,everything",
		"app=web,tier=edge": "web,everything,tier",
		"tier=back":         "everything",
		"":                  "everything",
	} {
		p := pod("p", nil)
		p.Labels = map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				p.Labels[k] = v
			}
		}
		if got := names(p); got != want {
			t.Errorf("pod with %q: budgets %q, want %q", labels, got, want)
		}
	}
}

// TestBackoff: 1 s doubling to 10 s, Retry-After when longer, never past
// the deadline.
func TestBackoff(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		round            int
		retryAfter, left time.Duration
		want             time.Duration
	}{
		{1, 0, time.Hour, 1 * s}, {2, 0, time.Hour, 2 * s}, {3, 0, time.Hour, 4 * s}, {4, 0, time.Hour, 8 * s},
		{5, 0, time.Hour, 10 * s}, {50, 0, time.Hour, 10 * s}, {1000000, 0, time.Hour, 10 * s},
		{1, 5 * s, time.Hour, 5 * s}, {5, 3 * s, time.Hour, 10 * s}, {2, 30 * s, time.Hour, 30 * s},
		{4, 0, 3 * s, 3 * s}, {2, 30 * s, 7 * s, 7 * s}, {1, 0, 0, 0}, {1, 0, -s, 0},
	} {
		if got := Backoff(c.round, c.retryAfter, c.left); got != c.want {
			t.Errorf("Backoff(%d, %s, %s) = %s, want %s", c.round, c.retryAfter, c.left, got, c.want)
		}
	}
}

func TestName(t *testing.T) {
	if got := Name([]string{"a", "b"}); got != "a, b" {
		t.Error(got)
	}
	if got := Name([]string{"a", "b", "c", "d", "e", "f", "g"}); got != "a, b, c, d, e and 2 more" {
		t.Error(got)
	}
}

func TestRefusalMessage(t *testing.T) {
	e := &Refusal{Node: "host-node0", Pods: []Decision{
		{PodRef: PodRef{Namespace: "a", Name: "bare"}, Action: Refuse, Reason: ReasonNoController},
		{PodRef: PodRef{Namespace: "a", Name: "cache"}, Action: Refuse, Reason: ReasonEmptyDir},
	}}
	want := "Node host-node0 cannot be drained: 1 pods no controller manages, which would be gone for good (a/bare): --force evicts them; " +
		"1 pods with emptyDir volumes, whose data would be lost (a/cache): --delete-emptydir-data evicts them"
	if e.Error() != want {
		t.Errorf("got  %s\nwant %s", e.Error(), want)
	}
}
