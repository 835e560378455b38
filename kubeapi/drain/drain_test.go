package drain_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

// client is a kubeapi client of s as user cn in groups.
func client(t *testing.T, s *kubeapitest.Server, cn string, groups ...string) *kubeapi.Client {
	t.Helper()
	cert, key := s.CA.Client(t, cn, groups...)
	dir := t.TempDir()
	for name, b := range map[string][]byte{"kubeconfig": s.Kubeconfig(t, map[string]string{"client-certificate": "c.pem", "client-key": "k.pem"}), "c.pem": cert, "k.pem": key} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := kubeapi.Load("/", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{})
	t.Cleanup(c.Close)
	return c
}

func admin(t *testing.T, s *kubeapitest.Server) *kubeapi.Client {
	return client(t, s, "kubernetes-admin", "system:masters")
}

func newPod(ns, name, node string, labels map[string]string, owner string) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if owner != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: owner, Name: "owner", UID: "o", Controller: &yes}}
	}
	return p
}

func pdb(ns, name string, allowed int32, match map[string]string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: match}},
		Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed, DesiredHealthy: 3, CurrentHealthy: 3 + allowed, ExpectedPods: 3},
	}
}

// clock is a fake clock whose Sleep advances it and calls onSleep.
type clock struct {
	now     time.Time
	waits   []time.Duration
	onSleep func(n int)
}

func (c *clock) Now() time.Time { return c.now }
func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	if c.onSleep != nil {
		c.onSleep(len(c.waits))
	}
	return nil
}

// cluster is a Node with: three web pods a budget covers, a DaemonSet pod,
// a mirror pod, a finished pod; and a pod of another Node.
func cluster(t *testing.T) *kubeapitest.Server {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node0", corev1.ConditionTrue, "KubeletReady", ""))
	s.SetNode(kubeapitest.Node("host-node1", corev1.ConditionTrue, "KubeletReady", ""))
	for _, n := range []string{"web-0", "web-1", "web-2"} {
		s.SetPod(newPod("shop", n, "host-node0", map[string]string{"app": "web"}, "ReplicaSet"))
	}
	s.SetPod(newPod("kube-system", "flannel-x", "host-node0", nil, "DaemonSet"))
	mirror := newPod("kube-system", "etcd-host-node0", "host-node0", nil, "Node")
	mirror.Annotations = map[string]string{"kubernetes.io/config.mirror": "h"}
	s.SetPod(mirror)
	done := newPod("shop", "job-1", "host-node0", nil, "Job")
	done.Status.Phase = corev1.PodSucceeded
	s.SetPod(done)
	s.SetPod(newPod("shop", "web-3", "host-node1", map[string]string{"app": "web"}, "ReplicaSet"))
	s.SetPDB(pdb("shop", "web", 0, map[string]string{"app": "web"}))
	return s
}

// TestDrainWaitsForBudget: the budget holds the web pods back (429) until
// a fourth healthy pod makes room; the drain names it, backs off, evicts
// them all, leaves the DaemonSet, mirror and finished pods, and waits
// until the evicted pods are gone.
func TestDrainWaitsForBudget(t *testing.T) {
	s := cluster(t)
	s.PodPage = 2 // the list comes in pages
	s.KeepEvicted = true
	c := admin(t, s)
	clk := &clock{now: time.Unix(1000, 0)}
	clk.onSleep = func(n int) {
		switch n {
		case 2: // another web pod became healthy elsewhere, then more
			s.SetPDB(pdb("shop", "web", 3, map[string]string{"app": "web"}))
		case 4: // kubelet stopped them
			for _, n := range []string{"web-0", "web-1", "web-2"} {
				s.DeletePod("shop", n)
			}
		}
	}
	var progress []string
	res, err := drain.Drain(context.Background(), c, "host-node0", drain.Options{
		Now: clk.Now, Sleep: clk.Sleep, Progress: func(p drain.Progress) { progress = append(progress, p.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Registered || !res.Cordoned || res.Evicted != 3 || res.Node != "host-node0" {
		t.Errorf("result %+v", res)
	}
	if n := s.GetNode("host-node0"); !n.Spec.Unschedulable {
		t.Error("host-node0 not cordoned")
	}
	if n := s.GetNode("host-node1"); n.Spec.Unschedulable {
		t.Error("host-node1 cordoned")
	}
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-0 shop/web-1 shop/web-2" {
		t.Errorf("evictions %s", got)
	}
	var acts []string
	for _, d := range res.Pods {
		acts = append(acts, d.String()+":"+strings.TrimSpace(string(d.Action)+" "+d.Reason))
	}
	if got, want := strings.Join(acts, " "), "kube-system/etcd-host-node0:skip MirrorPod kube-system/flannel-x:skip DaemonSet "+
		"shop/job-1:skip Terminated shop/web-0:evict shop/web-1:evict shop/web-2:evict"; got != want {
		t.Errorf("decisions\n got %s\nwant %s", got, want)
	}
	wantProgress := []string{
		"drain host-node0: cordoned, 3 pods to evict",
		"drain host-node0: evicted 0 of 3; PodDisruptionBudget shop/web holds back shop/web-0, shop/web-1, shop/web-2: needs 3 healthy pods, has 3, allows 0 disruptions; retrying in 1s",
		"drain host-node0: evicted 0 of 3; PodDisruptionBudget shop/web holds back shop/web-0, shop/web-1, shop/web-2: needs 3 healthy pods, has 3, allows 0 disruptions; retrying in 2s",
		"drain host-node0: evicted 3 of 3",
		"drain host-node0: evicted 3 of 3, waiting for 3 pods to go",
		"drain host-node0: evicted 3 of 3, waiting for 3 pods to go",
	}
	if strings.Join(progress, "\n") != strings.Join(wantProgress, "\n") {
		t.Errorf("progress\n got %s\nwant %s", strings.Join(progress, "\n"), strings.Join(wantProgress, "\n"))
	}
	if got := clk.waits; len(got) != 4 || got[0] != time.Second || got[1] != 2*time.Second || got[2] != drain.DefaultPoll {
		t.Errorf("waits %v", got)
	}
	if res.Seconds != 5 {
		t.Errorf("seconds %v, want 5 (the fake clock's)", res.Seconds)
	}
}

// TestDrainTimeout: a budget that never allows it fails the drain at the
// timeout, naming the pods and the budget; the Node stays cordoned until
// Uncordon.
func TestDrainTimeout(t *testing.T) {
	s := cluster(t)
	c := admin(t, s)
	clk := &clock{now: time.Unix(1000, 0)}
	res, err := drain.Drain(context.Background(), c, "host-node0", drain.Options{Timeout: 30 * time.Second, Now: clk.Now, Sleep: clk.Sleep})
	want := "draining Node host-node0: 3 of 3 pods still not evicted after 30s (shop/web-0, shop/web-1, shop/web-2): PodDisruptionBudget shop/web holds back shop/web-0, shop/web-1, shop/web-2: needs 3 healthy pods, has 3, allows 0 disruptions"
	if err == nil || err.Error() != want {
		t.Fatalf("error\n got %v\nwant %s", err, want)
	}
	var total time.Duration
	for _, w := range clk.waits {
		total += w
	}
	if total != 30*time.Second || clk.waits[len(clk.waits)-1] != 30*time.Second-(1+2+4+8+10)*time.Second {
		t.Errorf("waits %v (total %s)", clk.waits, total)
	}
	if !res.Cordoned || !s.GetNode("host-node0").Spec.Unschedulable {
		t.Fatal("not cordoned")
	}
	if err := drain.Uncordon(context.Background(), c, []*drain.Result{res}); err != nil {
		t.Fatal(err)
	}
	if s.GetNode("host-node0").Spec.Unschedulable || res.Cordoned {
		t.Error("still cordoned after Uncordon")
	}
}

// TestDrainRefuses: a pod nothing recreates, or with emptyDir data, stops
// the drain before any eviction; the options allow them.
func TestDrainRefuses(t *testing.T) {
	s := cluster(t)
	s.SetPDB(pdb("shop", "web", 3, map[string]string{"app": "web"}))
	s.SetPod(newPod("dev", "shell", "host-node0", nil, ""))
	scratch := newPod("dev", "cache", "host-node0", nil, "StatefulSet")
	scratch.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	s.SetPod(scratch)
	c := admin(t, s)
	_, _, err := drain.Check(context.Background(), c, "host-node0", drain.Rules{})
	var r *drain.Refusal
	if !errors.As(err, &r) || len(r.Pods) != 2 || !strings.Contains(err.Error(), "(dev/shell): --force") || !strings.Contains(err.Error(), "(dev/cache): --delete-emptydir-data") {
		t.Fatalf("Check: %v", err)
	}
	res, err := drain.Drain(context.Background(), c, "host-node0", drain.Options{Rules: drain.Rules{Force: true}})
	if !errors.As(err, &r) || len(r.Pods) != 1 || r.Pods[0].Name != "cache" {
		t.Fatalf("Drain --force: %v", err)
	}
	if len(s.Evictions()) != 0 || !res.Cordoned {
		t.Fatalf("evicted %v, cordoned %v", s.Evictions(), res.Cordoned)
	}
	s.SetNode(kubeapitest.Node("host-node0", corev1.ConditionTrue, "KubeletReady", ""))
	res, err = drain.Drain(context.Background(), c, "host-node0", drain.Options{Rules: drain.Rules{Force: true, DeleteEmptyDirData: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Evicted != 5 || s.GetPod("dev", "shell") != nil || s.GetPod("dev", "cache") != nil {
		t.Errorf("evicted %d: %v", res.Evicted, s.Evictions())
	}
}

// TestDrainAlreadyCordonedOrGone: a cordoned Node is not cordoned again
// (so not uncordoned either); a Node the API server does not have has
// nothing to drain.
func TestDrainAlreadyCordonedOrGone(t *testing.T) {
	s := cluster(t)
	s.SetPDB(pdb("shop", "web", 3, map[string]string{"app": "web"}))
	n := s.GetNode("host-node0")
	n.Spec.Unschedulable = true
	s.SetNode(n)
	c := admin(t, s)
	res, err := drain.Drain(context.Background(), c, "host-node0", drain.Options{})
	if err != nil || res.Cordoned || !res.Registered || res.Evicted != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = drain.Drain(context.Background(), c, "host-node9", drain.Options{})
	if err != nil || res.Registered || res.Cordoned || len(res.Pods) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestKubeletCredentials: a kubelet's own credentials may drain its own
// Node (list, cordon, evict: the Node authorizer and NodeRestriction
// allow it) but not read the budgets, so the API's 429 names the budget;
// nor touch another Node or delete its own.
func TestKubeletCredentials(t *testing.T) {
	s := cluster(t)
	s.KeepEvicted = true
	c := client(t, s, "system:node:host-node0", "system:nodes")
	if pods, err := c.PodsOnNode(context.Background(), "host-node0"); err != nil || len(pods) != 6 {
		t.Fatalf("own pods: %d %v", len(pods), err)
	}
	if _, err := c.PodsOnNode(context.Background(), "host-node1"); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("another Node's pods: %v", err)
	}
	if _, err := drain.Drain(context.Background(), c, "host-node1", drain.Options{}); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("drain of another Node: %v", err)
	}
	if err := c.Evict(context.Background(), "shop", "web-3", ""); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("evict another Node's pod: %v", err)
	}
	if _, err := c.PodDisruptionBudgets(context.Background(), "shop"); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("budgets: %v", err)
	}
	clk := &clock{now: time.Unix(1000, 0)}
	clk.onSleep = func(n int) {
		if n == 1 {
			s.SetPDB(pdb("shop", "web", 3, map[string]string{"app": "web"}))
		}
		if n == 2 {
			for _, p := range []string{"web-0", "web-1", "web-2"} {
				s.DeletePod("shop", p)
			}
		}
	}
	var progress []string
	res, err := drain.Drain(context.Background(), c, "host-node0", drain.Options{Now: clk.Now, Sleep: clk.Sleep,
		Progress: func(p drain.Progress) { progress = append(progress, p.String()) }})
	if err != nil || res.Evicted != 3 || !res.Cordoned {
		t.Fatalf("drain of its own Node: %+v %v", res, err)
	}
	if want := "drain host-node0: evicted 0 of 3; the API server holds back shop/web-0, shop/web-1, shop/web-2: The disruption budget web needs 3 healthy pods and has 3 currently; retrying in 1s"; progress[1] != want {
		t.Errorf("progress\n got %s\nwant %s", progress[1], want)
	}
	if err := c.DeleteNode(context.Background(), "host-node0"); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("delete as the kubelet: %v", err)
	}
}

// TestEvictErrors: the eviction API's answers as sentinels: 429 with the
// budget in its causes, 409 for another pod of the same name, 404 for a
// pod that is gone; and DeleteNode.
func TestEvictErrors(t *testing.T) {
	s := cluster(t)
	c := admin(t, s)
	err := c.Evict(context.Background(), "shop", "web-0", "uid-web-0")
	var ae *kubeapi.APIError
	if !errors.Is(err, kubeapi.ErrTooManyRequests) || !errors.As(err, &ae) || len(ae.Causes) != 1 || ae.Causes[0].Message != "The disruption budget web needs 3 healthy pods and has 3 currently" {
		t.Fatalf("429: %v %+v", err, ae)
	}
	if err := c.Evict(context.Background(), "shop", "web-0", "uid-other"); !errors.Is(err, kubeapi.ErrConflict) {
		t.Errorf("409: %v", err)
	}
	if err := c.Evict(context.Background(), "shop", "nope", ""); !errors.Is(err, kubeapi.ErrNotFound) || errors.Is(err, kubeapi.ErrNotRegistered) {
		t.Errorf("404: %v", err)
	}
	if err := c.Evict(context.Background(), "shop", "../x", ""); err == nil || !strings.Contains(err.Error(), `pod name "../x"`) {
		t.Errorf("bad name: %v", err)
	}
	if err := c.DeleteNode(context.Background(), "host-node1"); err != nil || s.GetNode("host-node1") != nil {
		t.Errorf("delete: %v", err)
	}
	if err := c.DeleteNode(context.Background(), "host-node1"); !errors.Is(err, kubeapi.ErrNotRegistered) || !errors.Is(err, kubeapi.ErrNotFound) {
		t.Errorf("delete again: %v", err)
	}
}

// TestCheckGatesNamesTheBudgetsADrainWouldMeet: what apply --dry-run
// --drain shows per Node (#25): the budgets that select the pods it
// would evict, with their state, and nothing for the pods it skips or
// for another Node's; the Node is not cordoned and nothing is evicted.
func TestCheckGatesNamesTheBudgetsADrainWouldMeet(t *testing.T) {
	s := cluster(t)
	s.SetPDB(pdb("shop", "lone", 1, map[string]string{"app": "lone"}))        // the lone pod only
	s.SetPDB(pdb("kube-system", "flannel", 0, map[string]string{"app": "x"})) // no pod it evicts
	s.SetPod(newPod("shop", "lone", "host-node0", map[string]string{"app": "lone"}, "ReplicaSet"))
	c := admin(t, s)
	ds, gates, err := drain.Check(context.Background(), c, "host-node0", drain.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(drain.Select(ds, drain.Evict)); n != 4 {
		t.Errorf("%d pods to evict, want 4", n)
	}
	var got []string
	for _, g := range gates {
		got = append(got, g.String())
	}
	want := []string{
		"PodDisruptionBudget shop/lone holds back shop/lone: needs 3 healthy pods, has 4, allows 1 disruptions",
		"PodDisruptionBudget shop/web holds back shop/web-0, shop/web-1, shop/web-2: needs 3 healthy pods, has 3, allows 0 disruptions",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gates\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s.GetNode("host-node0").Spec.Unschedulable || len(s.Evictions()) > 0 {
		t.Error("a check cordoned or evicted")
	}
}

// TestDrainRefusesAPodTwoBudgetsSelect: the Eviction API answers 500
// for a pod more than one budget selects ("This pod has more than one
// PodDisruptionBudget, which the eviction subresource does not
// support", seen in the e2e against kube-apiserver 1.37.2); the drain
// refuses it before it cordons, naming both budgets, and --force does
// not change that. A namespace whose budgets cannot be read refuses
// nothing: the dry run says the budgets are unknown.
func TestDrainRefusesAPodTwoBudgetsSelect(t *testing.T) {
	s := cluster(t)
	s.SetPDB(pdb("shop", "all", 5, map[string]string{}))
	c := admin(t, s)
	for _, force := range []bool{false, true} {
		_, _, err := drain.Check(context.Background(), c, "host-node0", drain.Rules{Force: force})
		var refusal *drain.Refusal
		if !errors.As(err, &refusal) {
			t.Fatalf("force %v: %v", force, err)
		}
		want := "Node host-node0 cannot be drained: 3 pods that more than one PodDisruptionBudget selects, which the Eviction API refuses to evict " +
			"(shop/web-0 (shop/all, shop/web), shop/web-1 (shop/all, shop/web), shop/web-2 (shop/all, shop/web)): make one budget select each pod"
		if err.Error() != want {
			t.Errorf("force %v:\n got %s\nwant %s", force, err, want)
		}
		if s.GetNode("host-node0").Spec.Unschedulable || len(s.Evictions()) > 0 {
			t.Fatalf("force %v: the check cordoned or evicted", force)
		}
	}
	// Drain itself (after its cordon) refuses likewise and evicts nothing.
	if _, err := drain.Drain(context.Background(), c, "host-node0", drain.Options{}); err == nil || len(s.Evictions()) > 0 {
		t.Fatalf("drain: %v, evictions %q", err, s.Evictions())
	}
	ds, gates, err := drain.Check(context.Background(), client(t, s, "system:node:host-node0", "system:nodes"), "host-node0", drain.Rules{})
	if err != nil {
		t.Fatalf("with a kubelet's credentials (no budgets to read): %v", err)
	}
	if n := len(drain.Select(ds, drain.Evict)); n != 3 || len(gates) != 1 || gates[0].Budget != "" || !strings.Contains(gates[0].Detail, "could not be read") {
		t.Errorf("kubelet credentials: %d evictions, gates %+v", n, gates)
	}
}
