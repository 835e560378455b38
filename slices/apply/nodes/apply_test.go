package nodes

import (
	"context"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// The Nodes an apply disrupts (the targets slices/apply decides) against
// the fake API server: drained, refused, let back in, settled.

// applyCluster is nodeCluster plus the Node of a partition "old" the new
// plan drops, a web pod on it, and apply's targets: node0's kubelet
// restarts on fresh state, old goes, node1 is untouched (the targets
// slices/apply's affectedNodes picks there, TestAffectedNodes).
func applyCluster(t *testing.T) (*kubeapitest.Server, []Target, string) {
	s, rec, dir := nodeCluster(t)
	s.SetNode(kubeapitest.Node("host-old", corev1.ConditionTrue, "KubeletReady", ""))
	s.SetPod(applytest.DrainPod("shop", "web-old", "host-old", "ReplicaSet", map[string]string{"app": "web"}))
	old := record.Partition{Name: "old", NodeName: "host-old", Kubeconfig: filepath.Join(dir, "kubelet-old.conf")}
	targets := []Target{
		{Partition: rec.Partitions[0], Reason: ReasonFreshState, Unit: "kubelet-node0.service"},
		{Partition: old, Reason: ReasonPartitionGone},
	}
	return s, targets, dir
}

// untouched fails t when partition node1's Node was cordoned or its web
// pod evicted: apply disrupts only the partitions it must.
func untouched(t *testing.T, s *kubeapitest.Server) {
	t.Helper()
	if s.GetNode("host-node1").Spec.Unschedulable || s.GetPod("shop", "web-node1") == nil || strings.Contains(strings.Join(s.Evictions(), " "), "node1") {
		t.Error("the untouched partition node1's Node was disrupted")
	}
}

// TestApplyNodesDrain: apply --drain drains only the Nodes it disrupts,
// one at a time (a budget holds old's web pod back once, then allows
// it); after the steps the Node of the partition that went is deleted,
// and the restarted kubelet's Node is uncordoned once it reports Ready
// since the restart, not on the Ready it showed before.
func TestApplyNodesDrain(t *testing.T) {
	s, targets, dir := applyCluster(t)
	s.SetPDB(applytest.Budget(1))
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	var progress []string
	o := Command{Root: "/", Nodes: Options{Kubeconfig: admin, Drain: true, Timeout: 10 * time.Second, Poll: 10 * time.Millisecond, Progress: func(p drain.Progress) {
		progress = append(progress, p.String())
		if p.Phase == drain.PhaseEvicting && len(p.Blocked) > 0 { // the replacement is healthy elsewhere
			s.SetPDB(applytest.Budget(1))
		}
	}}}
	n, warnings, err := Prepare(context.Background(), o, "apply", targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-node0 shop/web-old" {
		t.Errorf("evictions %s", got)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "drain host-old: evicted 0 of 1; PodDisruptionBudget shop/web holds back shop/web-old") {
		t.Errorf("progress:\n%s", strings.Join(progress, "\n"))
	}
	untouched(t, s)
	for _, node := range []string{"host-node0", "host-old"} {
		if !s.GetNode(node).Spec.Unschedulable {
			t.Errorf("%s not cordoned", node)
		}
	}
	rep := n.Report()
	want := [][]string{
		{"cordon", "evict 1 pods (shop/web-node0)", "wait until kubelet-node0.service's manager state holds no running pods",
			"restart kubelet-node0.service on fresh CPU/Memory Manager state", "uncordon once Ready"},
		{"cordon", "evict 1 pods (shop/web-old)", "delete Node host-old once its kubelet is stopped"},
	}
	for i := range want {
		if !reflect.DeepEqual(rep[i].Actions, want[i]) || rep[i].Drain == nil || rep[i].Drain.Evicted != 1 {
			t.Errorf("%s: actions %q, drain %+v", rep[i].Partition, rep[i].Actions, rep[i].Drain)
		}
	}

	// The steps ran: old's kubelet is stopped, node0's restarted.
	if got := strings.Join(runDeletions(t, n), ", "); got != "delete Node host-old" {
		t.Errorf("deletions: %s", got)
	}
	if s.GetNode("host-old") != nil || s.GetNode("host-node0") == nil {
		t.Error("deleted the wrong Nodes")
	}
	since := time.Now()
	applytest.Heartbeat(s, "host-node0", since.Add(-time.Minute)) // the Ready of the kubelet before the restart
	n.c.Nodes.Timeout = 50 * time.Millisecond
	warnings = n.Readmit(context.Background(), since)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "partition node0: Node host-node0 left cordoned: not Ready after 50ms: its kubelet has not reported since the restart") ||
		!s.GetNode("host-node0").Spec.Unschedulable {
		t.Fatalf("a stale Ready: %q", warnings)
	}
	applytest.Heartbeat(s, "host-node0", since)
	n.c.Nodes.Timeout = 10 * time.Second
	if warnings := n.Readmit(context.Background(), since); len(warnings) != 0 || s.GetNode("host-node0").Spec.Unschedulable || !n.removal[0].Uncordoned {
		t.Errorf("Ready again: %q, cordoned %v", warnings, s.GetNode("host-node0").Spec.Unschedulable)
	}
	untouched(t, s)
}

// TestApplyNodesRefused: every refusal comes before any Node is cordoned
// or pod evicted. Without --drain a pod bound to a partition that goes
// refuses the apply (naming apply --drain), unless --force; with --drain
// a pod no controller manages refuses it, unless --force; a dry run
// lists the refusal and the actions, and changes nothing.
func TestApplyNodesRefused(t *testing.T) {
	s, targets, dir := applyCluster(t)
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	nothingChanged := func(what string) {
		t.Helper()
		for _, node := range []string{"host-node0", "host-node1", "host-old"} {
			if s.GetNode(node).Spec.Unschedulable {
				t.Errorf("%s: Node %s cordoned", what, node)
			}
		}
		if ev := s.Evictions(); len(ev) != 0 {
			t.Errorf("%s: evictions %q", what, ev)
		}
	}
	gone := targets[1:] // without --drain, only the partition that goes is checked (Apply)

	o := Command{Root: "/", Nodes: Options{Kubeconfig: admin}}
	_, _, err := Prepare(context.Background(), o, "apply", gone, nil)
	if err == nil || err.Error() != "partition old: 1 pods are bound to Node host-old (shop/web-old)\n(apply --drain evicts them first, honouring their PodDisruptionBudgets; --force applies with them bound (their Nodes are deleted, and what a controller manages is recreated elsewhere))" {
		t.Fatalf("without --drain: %v", err)
	}
	nothingChanged("without --drain")
	o.Nodes.Force = true
	n, warnings, err := Prepare(context.Background(), o, "apply", gone, nil)
	if err != nil || len(warnings) != 1 || !strings.HasPrefix(warnings[0], "partition old: 1 pods are bound") {
		t.Fatalf("--force: %q %v", warnings, err)
	}
	if a := n.Report()[0].Actions; !reflect.DeepEqual(a, []string{"strand 1 pods are bound to Node host-old (shop/web-old)", "delete Node host-old once its kubelet is stopped"}) {
		t.Errorf("--force: actions %q", a)
	}
	n.Close()
	nothingChanged("--force")

	s.SetPod(applytest.DrainPod("dev", "shell", "host-old", "", nil))
	s.SetPod(applytest.DrainPod("dev", "scratch", "host-node0", "ReplicaSet", nil))
	o.Nodes = Options{Kubeconfig: admin, Drain: true, Timeout: 10 * time.Second}
	_, _, err = Prepare(context.Background(), o, "apply", targets, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "partition old: Node host-old cannot be drained: 1 pods no controller manages, which would be gone for good (dev/shell): --force evicts them") ||
		!strings.HasSuffix(err.Error(), "\n(nothing was changed)") {
		t.Fatalf("--drain, a pod no controller manages: %v", err)
	}
	nothingChanged("--drain refused")

	o.DryRun = true
	s.SetPDB(applytest.Budget(0)) // the dry run names the budget its evictions meet
	n, warnings, err = Prepare(context.Background(), o, "apply", targets, nil)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "dev/shell") {
		t.Fatalf("dry run: %q %v", warnings, err)
	}
	rep := n.Report()
	n.Close()
	if a := rep[1].Actions; !reflect.DeepEqual(a, []string{"cordon", "evict 1 pods (shop/web-old)",
		"evictions of shop/web-old gated by PodDisruptionBudget shop/web (needs 1 healthy pods, has 1, allows 0 disruptions)",
		"refused: 1 pods may not be evicted (dev/shell (NoController))", "delete Node host-old once its kubelet is stopped"}) {
		t.Errorf("dry run: actions %q", a)
	}
	if b := rep[1].Budgets; len(b) != 1 || b[0].Budget != "shop/web" || !reflect.DeepEqual(b[0].Pods, []string{"shop/web-old"}) {
		t.Errorf("dry run: budgets %+v", b)
	}
	if a := rep[0].Actions; len(a) < 2 || a[1] != "evict 2 pods (dev/scratch, shop/web-node0)" || rep[0].Drain != nil {
		t.Errorf("dry run: node0 %q %+v", a, rep[0].Drain)
	}
	nothingChanged("dry run")

	s.SetPDB(applytest.Budget(5))
	o.DryRun, o.Nodes.Force = false, true
	n, _, err = Prepare(context.Background(), o, "apply", targets, nil)
	if err != nil {
		t.Fatalf("--drain --force: %v", err)
	}
	n.Close()
	if got := strings.Join(s.Evictions(), " "); got != "dev/scratch shop/web-node0 dev/shell shop/web-old" {
		t.Errorf("--drain --force: evictions %s", got)
	}
	untouched(t, s)
}

// TestApplyNodesDrainFails: a drain that times out (a budget never
// allows old's web pod to go) uncordons the Node this apply drained
// before it, and says nothing on the host changed; the untouched
// partition's Node was never cordoned.
func TestApplyNodesDrainFails(t *testing.T) {
	s, targets, dir := applyCluster(t)
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	var cordoned []string
	o := Command{Root: "/", Nodes: Options{Kubeconfig: admin, Drain: true, Timeout: 100 * time.Millisecond, Progress: func(p drain.Progress) {
		if p.Phase == drain.PhaseCordoned {
			cordoned = append(cordoned, p.Node)
			if p.Node == "host-old" {
				s.SetPDB(applytest.Budget(0))
			}
		}
	}}}
	_, _, err := Prepare(context.Background(), o, "apply", targets, nil)
	if err == nil || !strings.Contains(err.Error(), "partition old: draining Node host-old: 1 of 1 pods still not evicted after 100ms") ||
		!strings.HasSuffix(err.Error(), "(nothing on the host was changed; the Nodes this apply cordoned are schedulable again)") {
		t.Fatalf("error: %v", err)
	}
	if got := strings.Join(cordoned, " "); got != "host-node0 host-old" {
		t.Errorf("cordoned %s", got)
	}
	for _, node := range []string{"host-node0", "host-old"} {
		if s.GetNode(node).Spec.Unschedulable {
			t.Errorf("%s left cordoned", node)
		}
	}
	untouched(t, s)
}

// TestApplyNodesWithKubelets: without --kubeconfig the kubelet's own
// credentials drain its Node and uncordon it (the Node authorizer lets
// it); the Node of a partition that goes stays (a warning says how to
// delete it); a kubelet that must restart on fresh state but never
// joined cannot be drained, which refuses apply --drain.
func TestApplyNodesWithKubelets(t *testing.T) {
	s, targets, dir := applyCluster(t)
	o := Command{Root: "/", Nodes: Options{Drain: true, Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}}
	_, _, err := Prepare(context.Background(), o, "apply", targets, nil)
	if err == nil || !strings.Contains(err.Error(), "partition node0: its Node cannot be drained: "+filepath.Join(dir, "kubelet-node0.conf")+" does not exist: the kubelet never joined") {
		t.Fatalf("never joined: %v", err)
	}
	applytest.KubeconfigFor(t, s, targets[0].Kubeconfig, "system:node:host-node0", "system:nodes")
	applytest.KubeconfigFor(t, s, targets[1].Kubeconfig, "system:node:host-old", "system:nodes")
	n, warnings, err := Prepare(context.Background(), o, "apply", targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if len(warnings) != 1 || warnings[0] != "the Nodes host-old stay in the API server, NotReady: apply --kubeconfig FILE deletes them (an identity examples/drain-rbac.yaml allows), else kubectl delete node" {
		t.Errorf("warnings %q", warnings)
	}
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-node0 shop/web-old" {
		t.Errorf("evictions %s", got)
	}
	if len(n.Deletions(context.Background())) != 0 {
		t.Error("deletions without an identity allowed to delete")
	}
	if a := n.Report()[1].Actions; a[len(a)-1] != "leave Node host-old in the API server, NotReady" {
		t.Errorf("actions %q", a)
	}
	since := time.Now()
	applytest.Heartbeat(s, "host-node0", since.Add(time.Second))
	if warnings := n.Readmit(context.Background(), since); len(warnings) != 0 || s.GetNode("host-node0").Spec.Unschedulable {
		t.Errorf("readmit with the kubelet's credentials: %q", warnings)
	}
	if !s.GetNode("host-old").Spec.Unschedulable {
		t.Error("the Node of the partition that went was uncordoned")
	}
	untouched(t, s)
}

// TestSettleCordoned: Nodes an interrupted drain left cordoned (the
// record's list) are uncordoned once Ready; one not Ready stays listed,
// with a warning; one of a partition that went is dropped; the record
// on disk follows. When the apply restarted a listed Node's kubelet, a
// Ready since the restart is waited for.
func TestSettleCordoned(t *testing.T) {
	s, rec, dir := nodeCluster(t)
	root := t.TempDir()
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	o := Command{Root: root, Nodes: Options{Kubeconfig: admin, Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}}
	o.Log = slog.Default()
	notReady := kubeapitest.Node("host-node1", corev1.ConditionFalse, "KubeletNotReady", "")
	s.SetNode(notReady)
	for _, node := range []string{"host-node0", "host-node1"} {
		n := s.GetNode(node)
		n.Spec.Unschedulable = true
		s.SetNode(n)
	}
	rec.Cordoned = []record.CordonedNode{{Partition: "node0", Node: "host-node0"}, {Partition: "node1", Node: "host-node1"}, {Partition: "gone", Node: "host-gone"}}
	warnings := SettleCordoned(context.Background(), o, rec, nil, nil, time.Time{}, true)
	if len(warnings) != 2 || warnings[0] != "partition node1: Node host-node1, which an interrupted drain left cordoned, stays cordoned: not Ready after 0s: Ready is False (KubeletNotReady)" ||
		warnings[1] != "the next apply uncordons host-node1 once Ready (or kubectl uncordon)" {
		t.Errorf("warnings %q", warnings)
	}
	if s.GetNode("host-node0").Spec.Unschedulable || !s.GetNode("host-node1").Spec.Unschedulable {
		t.Error("uncordoned the wrong Nodes")
	}
	onDisk, err := record.Read(root)
	must(t, err)
	if want := []record.CordonedNode{{Partition: "node1", Node: "host-node1"}}; !reflect.DeepEqual(rec.Cordoned, want) || onDisk == nil || !reflect.DeepEqual(onDisk.Cordoned, want) {
		t.Fatalf("left %+v, on disk %+v", rec.Cordoned, onDisk)
	}

	// This apply restarted node1's kubelet, which reports Ready a moment
	// later.
	started := time.Now()
	go func() {
		time.Sleep(100 * time.Millisecond)
		n := s.GetNode("host-node1")
		n.Status.Conditions[1].Status = corev1.ConditionTrue
		n.Status.Conditions[1].LastHeartbeatTime = metav1.NewTime(time.Now().Add(time.Second))
		s.SetNode(n)
	}()
	warnings = SettleCordoned(context.Background(), o, rec, nil, map[string]bool{"node1": true}, started, true)
	if len(warnings) != 0 || s.GetNode("host-node1").Spec.Unschedulable {
		t.Errorf("after the restart: %q", warnings)
	}
	onDisk, err = record.Read(root)
	must(t, err)
	if len(rec.Cordoned) != 0 || len(onDisk.Cordoned) != 0 {
		t.Errorf("still listed: %+v %+v", rec.Cordoned, onDisk.Cordoned)
	}

	// A drain that finds a listed Node cordoned already adopts the cordon.
	n := &Run{removal: []Removal{
		{Partition: "node0", Node: "host-node0", Drain: &drain.Result{Registered: true}},
		{Partition: "node1", Node: "host-node1", Drain: &drain.Result{Registered: true}},
	}}
	n.Adopt([]record.CordonedNode{{Partition: "node0", Node: "host-node0"}})
	if !n.removal[0].Drain.Cordoned || n.removal[1].Drain.Cordoned {
		t.Errorf("adopt: %+v %+v", n.removal[0].Drain, n.removal[1].Drain)
	}
}
