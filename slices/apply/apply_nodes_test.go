package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// The Node side of apply (apply_nodes.go, nodes.go) against the fake API
// server; apply on a host is the sandbox tests'.

// kubeletUnits are a Desired's units of partitions names: a slice and a
// kubelet each, the kubelet's managers now under settings[i].
func kubeletUnits(names []string, settings ...string) Desired {
	var d Desired
	for i, p := range names {
		d.Units = append(d.Units, bundle.Unit{Name: "np-" + p + ".slice", Partition: p},
			bundle.Unit{Name: "kubelet-" + p + ".service", Partition: p,
				KubeletState: &bundle.KubeletState{Dir: "var/lib/kubelet-" + p, Settings: settings[i]}})
	}
	return d
}

// withHolders adds to d a mount namespace holder per partition and a
// host-wide uplink, the units whose restart re-creates pods.
func withHolders(d Desired) Desired {
	parts := map[string]bool{}
	for _, u := range d.Units {
		if u.Partition != "" && !parts[u.Partition] {
			parts[u.Partition] = true
			d.Units = append(d.Units, bundle.Unit{Name: "mountns-" + u.Partition + ".service", Partition: u.Partition, RecreatesPods: true})
		}
	}
	d.Units = append(d.Units, bundle.Unit{Name: "uplink.service", RecreatesPods: true})
	return d
}

func targetStrings(ts []nodeTarget) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s:%s:%s:%s", t.Name, t.Reason, t.NodeName, t.Unit))
	}
	return out
}

// TestAffectedNodes: the pure decision of which partitions' Nodes an
// apply disrupts.
func TestAffectedNodes(t *testing.T) {
	record := &Record{Partitions: []RecordPartition{
		{Name: "node0", NodeName: "host-node0", Kubeconfig: "/k0"},
		{Name: "node1", NodeName: "host-node1", Kubeconfig: "/k1"},
		{Name: "old", NodeName: "host-old", Kubeconfig: "/kold"},
	}}
	next := []RecordPartition{{Name: "node0", NodeName: "host-node0"}, {Name: "node1", NodeName: "host-node1"}}
	pinned := func(stamp string, pods ...string) KubeletStateOnHost {
		return KubeletStateOnHost{Stamp: stamp, Files: []string{"var/lib/x/cpu_manager_state"}, Pinned: pods}
	}
	for _, tc := range []struct {
		name   string
		d      Desired
		states map[string]KubeletStateOnHost
		steps  []Step
		rec    *Record
		next   []RecordPartition
		reset  bool
		want   []string
	}{{
		name: "kubelet with pods pinned restarts on fresh state; a partition goes",
		d:    kubeletUnits([]string{"node0", "node1"}, "new", "s1"),
		states: map[string]KubeletStateOnHost{
			"kubelet-node0.service": pinned("old", "uid-a"),
			"kubelet-node1.service": pinned("s1", "uid-b"), // settings unchanged: untouched
		},
		rec: record, next: next,
		want: []string{"node0:freshKubeletState:host-node0:kubelet-node0.service", "old:partitionGone:host-old:"},
	}, {
		name:   "--reset-kubelet-state keeps the pods running: only the partition that goes",
		d:      kubeletUnits([]string{"node0", "node1"}, "new", "s1"),
		states: map[string]KubeletStateOnHost{"kubelet-node0.service": pinned("old", "uid-a")},
		rec:    record, next: next, reset: true,
		want: []string{"old:partitionGone:host-old:"},
	}, {
		name:   "state with no running pods: restarted without a drain",
		d:      kubeletUnits([]string{"node0", "node1"}, "new", "s1"),
		states: map[string]KubeletStateOnHost{"kubelet-node0.service": pinned("old")},
		rec:    record, next: next,
		want: []string{"old:partitionGone:host-old:"},
	}, {
		name:   "never stamped (the first apply): its files are kept, nothing restarts on fresh state",
		d:      kubeletUnits([]string{"node0", "node1"}, "new", "s1"),
		states: map[string]KubeletStateOnHost{"kubelet-node0.service": pinned("", "uid-a")},
		rec:    &Record{Partitions: record.Partitions[:2]}, next: next,
		want: []string{},
	}, {
		name:   "the record lost: the plan's Node",
		d:      kubeletUnits([]string{"node0"}, "new"),
		states: map[string]KubeletStateOnHost{"kubelet-node0.service": pinned("old", "uid-a")},
		next:   next[:1],
		want:   []string{"node0:freshKubeletState:host-node0:kubelet-node0.service"},
	}, {
		name: "a Node rename strands the old Node: it goes, with the record's name",
		d:    kubeletUnits([]string{"node0", "node1"}, "s0", "s1"),
		rec:  &Record{Partitions: record.Partitions[:2]},
		next: []RecordPartition{{Name: "node0", NodeName: "host-node0"}, {Name: "node1", NodeName: "renamed-node1"}},
		want: []string{"node1:partitionGone:host-node1:"},
	}, {
		name: "another layout: every recorded partition the plan lacks goes, in record order",
		d:    kubeletUnits([]string{"whole"}, "s"),
		rec:  record, next: []RecordPartition{{Name: "whole", NodeName: "host"}},
		want: []string{"node0:partitionGone:host-node0:", "node1:partitionGone:host-node1:", "old:partitionGone:host-old:"},
	}, {
		name:  "a restarted mount namespace holder re-creates its partition's pods (#25: a hugepage view change)",
		d:     withHolders(kubeletUnits([]string{"node0", "node1"}, "s0", "s1")),
		steps: []Step{{Action: RestartUnit{Unit: "mountns-node1.service"}}, {Action: RestartUnit{Unit: "kubelet-node0.service"}}},
		rec:   &Record{Partitions: record.Partitions[:2]}, next: next,
		want: []string{"node1:namespaceRebuilt:host-node1:mountns-node1.service"},
	}, {
		name:  "a holder that starts (it was down) re-creates nothing: its pods were gone",
		d:     withHolders(kubeletUnits([]string{"node0", "node1"}, "s0", "s1")),
		steps: []Step{{Action: StartUnit{Unit: "mountns-node1.service"}}},
		rec:   &Record{Partitions: record.Partitions[:2]}, next: next,
		want: []string{},
	}, {
		name:   "a host-wide unit's restart (the uplink) re-creates every partition's pods; fresh state wins where both",
		d:      withHolders(kubeletUnits([]string{"node0", "node1"}, "new", "s1")),
		states: map[string]KubeletStateOnHost{"kubelet-node0.service": pinned("old", "uid-a")},
		steps:  []Step{{Action: RestartUnit{Unit: "uplink.service"}}},
		rec:    &Record{Partitions: record.Partitions[:2]}, next: next,
		want: []string{"node0:freshKubeletState:host-node0:kubelet-node0.service", "node1:namespaceRebuilt:host-node1:uplink.service"},
	}, {
		name: "no plan (tests): the units' partitions are the plan's",
		d:    kubeletUnits([]string{"node0", "node1"}, "s0", "s1"),
		rec:  record,
		want: []string{"old:partitionGone:host-old:"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cur := Current{Record: tc.rec, KubeletStates: tc.states}
			got := targetStrings(affectedNodes(tc.d, cur, tc.steps, tc.next, tc.reset))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestKubeletStateRefusalNamesApplyDrain: without --drain, a kubelet
// whose state holds running pods is refused, and the refusal says that
// apply --drain is the way (and keeps --reset-kubelet-state).
func TestKubeletStateRefusalNamesApplyDrain(t *testing.T) {
	d := kubeletUnits([]string{"node0"}, "new")
	cur := Current{KubeletStates: map[string]KubeletStateOnHost{"kubelet-node0.service": {Stamp: "old",
		Files: []string{"var/lib/kubelet-node0/cpu_manager_state"}, Pinned: []string{"uid-a"}}}}
	err := checkKubeletStates(d, cur, false)
	for _, want := range []string{"kubelet-node0.service: its CPU and Memory Manager settings change (old → new)", "1 pods (uid-a)",
		"drain partition node0's Node first — apply --drain does", "apply --reset-kubelet-state"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q: %v", want, err)
		}
	}
	if err := checkKubeletStates(d, cur, true); err != nil {
		t.Errorf("told to: %v", err)
	}
}

// applyCluster is nodeCluster plus the Node of a partition "old" the new
// plan drops, a web pod on it, and apply's targets: node0's kubelet
// restarts on fresh state, old goes, node1 is untouched.
func applyCluster(t *testing.T) (*kubeapitest.Server, []nodeTarget, string) {
	s, rec, dir := nodeCluster(t)
	s.SetNode(kubeapitest.Node("host-old", corev1.ConditionTrue, "KubeletReady", ""))
	s.SetPod(drainPod("shop", "web-old", "host-old", "ReplicaSet", map[string]string{"app": "web"}))
	rec.Partitions = append(rec.Partitions, RecordPartition{Name: "old", NodeName: "host-old", Kubeconfig: filepath.Join(dir, "kubelet-old.conf")})
	cur := Current{Record: rec, KubeletStates: map[string]KubeletStateOnHost{
		"kubelet-node0.service": {Stamp: "old", Files: []string{"var/lib/kubelet-node0/cpu_manager_state"}, Pinned: []string{"uid-web-node0"}},
	}}
	targets := affectedNodes(kubeletUnits([]string{"node0", "node1"}, "new", "s1"), cur, nil, nil, false)
	if got := strings.Join(targetStrings(targets), " "); got != "node0:freshKubeletState:host-node0:kubelet-node0.service old:partitionGone:host-old:" {
		t.Fatalf("targets %s", got)
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

func budget(allowed int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, DesiredHealthy: 1, CurrentHealthy: 1 + allowed}}
}

// heartbeat sets Node name's Ready condition's heartbeat to at, keeping
// the rest (its cordon).
func heartbeat(s *kubeapitest.Server, name string, at time.Time) {
	n := s.GetNode(name)
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].LastHeartbeatTime = metav1.NewTime(at)
		}
	}
	s.SetNode(n)
}

// TestApplyNodesDrain: apply --drain drains only the Nodes it disrupts,
// one at a time (a budget holds old's web pod back once, then allows
// it); after the steps the Node of the partition that went is deleted,
// and the restarted kubelet's Node is uncordoned once it reports Ready
// since the restart, not on the Ready it showed before.
func TestApplyNodesDrain(t *testing.T) {
	s, targets, dir := applyCluster(t)
	s.SetPDB(budget(1))
	admin := kubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	var progress []string
	o := Options{Root: "/", Nodes: NodeOptions{Kubeconfig: admin, Drain: true, Timeout: 10 * time.Second, Poll: 10 * time.Millisecond, Progress: func(p drain.Progress) {
		progress = append(progress, p.String())
		if p.Phase == drain.PhaseEvicting && len(p.Blocked) > 0 { // the replacement is healthy elsewhere
			s.SetPDB(budget(1))
		}
	}}}
	n, warnings, err := prepareNodes(context.Background(), o, "apply", targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
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
	rep := n.report()
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
	heartbeat(s, "host-node0", since.Add(-time.Minute)) // the Ready of the kubelet before the restart
	n.o.Nodes.Timeout = 50 * time.Millisecond
	warnings = n.readmit(context.Background(), since)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "partition node0: Node host-node0 left cordoned: not Ready after 50ms: its kubelet has not reported since the restart") ||
		!s.GetNode("host-node0").Spec.Unschedulable {
		t.Fatalf("a stale Ready: %q", warnings)
	}
	heartbeat(s, "host-node0", since)
	n.o.Nodes.Timeout = 10 * time.Second
	if warnings := n.readmit(context.Background(), since); len(warnings) != 0 || s.GetNode("host-node0").Spec.Unschedulable || !n.removal[0].Uncordoned {
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
	admin := kubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
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

	o := Options{Root: "/", Nodes: NodeOptions{Kubeconfig: admin}}
	_, _, err := prepareNodes(context.Background(), o, "apply", gone, nil)
	if err == nil || err.Error() != "partition old: 1 pods are bound to Node host-old (shop/web-old)\n(apply --drain evicts them first, honouring their PodDisruptionBudgets; --force applies with them bound (their Nodes are deleted, and what a controller manages is recreated elsewhere))" {
		t.Fatalf("without --drain: %v", err)
	}
	nothingChanged("without --drain")
	o.Nodes.Force = true
	n, warnings, err := prepareNodes(context.Background(), o, "apply", gone, nil)
	if err != nil || len(warnings) != 1 || !strings.HasPrefix(warnings[0], "partition old: 1 pods are bound") {
		t.Fatalf("--force: %q %v", warnings, err)
	}
	if a := n.report()[0].Actions; !reflect.DeepEqual(a, []string{"strand 1 pods are bound to Node host-old (shop/web-old)", "delete Node host-old once its kubelet is stopped"}) {
		t.Errorf("--force: actions %q", a)
	}
	n.close()
	nothingChanged("--force")

	s.SetPod(drainPod("dev", "shell", "host-old", "", nil))
	s.SetPod(drainPod("dev", "scratch", "host-node0", "ReplicaSet", nil))
	o.Nodes = NodeOptions{Kubeconfig: admin, Drain: true, Timeout: 10 * time.Second}
	_, _, err = prepareNodes(context.Background(), o, "apply", targets, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "partition old: Node host-old cannot be drained: 1 pods no controller manages, which would be gone for good (dev/shell): --force evicts them") ||
		!strings.HasSuffix(err.Error(), "\n(nothing was changed)") {
		t.Fatalf("--drain, a pod no controller manages: %v", err)
	}
	nothingChanged("--drain refused")

	o.DryRun = true
	s.SetPDB(budget(0)) // the dry run names the budget its evictions meet
	n, warnings, err = prepareNodes(context.Background(), o, "apply", targets, nil)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "dev/shell") {
		t.Fatalf("dry run: %q %v", warnings, err)
	}
	rep := n.report()
	n.close()
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

	s.SetPDB(budget(5))
	o.DryRun, o.Nodes.Force = false, true
	n, _, err = prepareNodes(context.Background(), o, "apply", targets, nil)
	if err != nil {
		t.Fatalf("--drain --force: %v", err)
	}
	n.close()
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
	admin := kubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	var cordoned []string
	o := Options{Root: "/", Nodes: NodeOptions{Kubeconfig: admin, Drain: true, Timeout: 100 * time.Millisecond, Progress: func(p drain.Progress) {
		if p.Phase == drain.PhaseCordoned {
			cordoned = append(cordoned, p.Node)
			if p.Node == "host-old" {
				s.SetPDB(budget(0))
			}
		}
	}}}
	_, _, err := prepareNodes(context.Background(), o, "apply", targets, nil)
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
	o := Options{Root: "/", Nodes: NodeOptions{Drain: true, Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}}
	_, _, err := prepareNodes(context.Background(), o, "apply", targets, nil)
	if err == nil || !strings.Contains(err.Error(), "partition node0: its Node cannot be drained: "+filepath.Join(dir, "kubelet-node0.conf")+" does not exist: the kubelet never joined") {
		t.Fatalf("never joined: %v", err)
	}
	kubeconfigFor(t, s, targets[0].Kubeconfig, "system:node:host-node0", "system:nodes")
	kubeconfigFor(t, s, targets[1].Kubeconfig, "system:node:host-old", "system:nodes")
	n, warnings, err := prepareNodes(context.Background(), o, "apply", targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	if len(warnings) != 1 || warnings[0] != "the Nodes host-old stay in the API server, NotReady: apply --kubeconfig FILE deletes them (an identity examples/drain-rbac.yaml allows), else kubectl delete node" {
		t.Errorf("warnings %q", warnings)
	}
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-node0 shop/web-old" {
		t.Errorf("evictions %s", got)
	}
	if len(n.deletions(context.Background())) != 0 {
		t.Error("deletions without an identity allowed to delete")
	}
	if a := n.report()[1].Actions; a[len(a)-1] != "leave Node host-old in the API server, NotReady" {
		t.Errorf("actions %q", a)
	}
	since := time.Now()
	heartbeat(s, "host-node0", since.Add(time.Second))
	if warnings := n.readmit(context.Background(), since); len(warnings) != 0 || s.GetNode("host-node0").Spec.Unschedulable {
		t.Errorf("readmit with the kubelet's credentials: %q", warnings)
	}
	if !s.GetNode("host-old").Spec.Unschedulable {
		t.Error("the Node of the partition that went was uncordoned")
	}
	untouched(t, s)
}

// TestWaitKubeletsLetGo: after a drain apply waits for kubelet to clean
// the evicted pods up (their directories go) before it moves the state
// aside; a pod that stays (a DaemonSet's, which a drain leaves) fails
// the wait, naming it.
func TestWaitKubeletsLetGo(t *testing.T) {
	root := t.TempDir()
	d := kubeletUnits([]string{"node0"}, "new")
	dir := filepath.Join(root, "var/lib/kubelet-node0")
	must(t, os.MkdirAll(filepath.Join(dir, "pods", "uid-a"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "pods", "uid-b"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, KubeletStampName), []byte("old\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "cpu_manager_state"), []byte(`{"policyName":"static","entries":{"uid-a":{},"uid-b":{}}}`), 0o600))
	states, err := gatherKubeletState(root, d)
	must(t, err)
	cur := Current{KubeletStates: states}
	o := Options{Root: root, Nodes: NodeOptions{Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}}
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = os.RemoveAll(filepath.Join(dir, "pods", "uid-a"))
		_ = os.RemoveAll(filepath.Join(dir, "pods", "uid-b"))
	}()
	got, err := waitKubeletsLetGo(context.Background(), o, d, cur)
	if err != nil || len(got.KubeletStates["kubelet-node0.service"].Pinned) != 0 {
		t.Fatalf("let go: %+v %v", got.KubeletStates, err)
	}
	if len(cur.KubeletStates["kubelet-node0.service"].Pinned) != 2 {
		t.Error("the wait changed its caller's state")
	}
	must(t, os.MkdirAll(filepath.Join(dir, "pods", "uid-b"), 0o755))
	states, err = gatherKubeletState(root, d)
	must(t, err)
	o.Nodes.Timeout = 50 * time.Millisecond
	_, err = waitKubeletsLetGo(context.Background(), o, d, Current{KubeletStates: states})
	if err == nil || !strings.HasPrefix(err.Error(), "partition node0: kubelet-node0.service still holds the exclusive CPUs or pinned memory of 1 running pods (uid-b) 50ms after its Node was drained") ||
		!strings.Contains(err.Error(), "apply --reset-kubelet-state") {
		t.Fatalf("a pod that stays: %v", err)
	}
}

// TestSettleCordoned: Nodes an interrupted drain left cordoned (the
// record's list) are uncordoned once Ready; one not Ready stays listed,
// with a warning; one of a partition that went is dropped; the record
// on disk follows. When the apply restarted a listed Node's kubelet, a
// Ready since the restart is waited for.
func TestSettleCordoned(t *testing.T) {
	s, rec, dir := nodeCluster(t)
	root := t.TempDir()
	admin := kubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	o := Options{Root: root, Nodes: NodeOptions{Kubeconfig: admin, Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}}
	o.defaults()
	notReady := kubeapitest.Node("host-node1", corev1.ConditionFalse, "KubeletNotReady", "")
	s.SetNode(notReady)
	for _, node := range []string{"host-node0", "host-node1"} {
		n := s.GetNode(node)
		n.Spec.Unschedulable = true
		s.SetNode(n)
	}
	rec.Cordoned = []CordonedNode{{Partition: "node0", Node: "host-node0"}, {Partition: "node1", Node: "host-node1"}, {Partition: "gone", Node: "host-gone"}}
	warnings := settleCordoned(context.Background(), o, rec, nil, nil, nil, time.Time{}, true)
	if len(warnings) != 2 || warnings[0] != "partition node1: Node host-node1, which an interrupted drain left cordoned, stays cordoned: not Ready after 0s: Ready is False (KubeletNotReady)" ||
		warnings[1] != "the next apply uncordons host-node1 once Ready (or kubectl uncordon)" {
		t.Errorf("warnings %q", warnings)
	}
	if s.GetNode("host-node0").Spec.Unschedulable || !s.GetNode("host-node1").Spec.Unschedulable {
		t.Error("uncordoned the wrong Nodes")
	}
	onDisk, err := record.Read(root)
	must(t, err)
	if want := []CordonedNode{{Partition: "node1", Node: "host-node1"}}; !reflect.DeepEqual(rec.Cordoned, want) || onDisk == nil || !reflect.DeepEqual(onDisk.Cordoned, want) {
		t.Fatalf("left %+v, on disk %+v", rec.Cordoned, onDisk)
	}

	// This apply restarted node1's kubelet, which reports Ready a moment
	// later.
	units := kubeletUnits([]string{"node1"}, "s1").Units
	started := time.Now()
	go func() {
		time.Sleep(100 * time.Millisecond)
		n := s.GetNode("host-node1")
		n.Status.Conditions[1].Status = corev1.ConditionTrue
		n.Status.Conditions[1].LastHeartbeatTime = metav1.NewTime(time.Now().Add(time.Second))
		s.SetNode(n)
	}()
	warnings = settleCordoned(context.Background(), o, rec, nil, []Step{{Action: StartUnit{Unit: "kubelet-node1.service"}}}, units, started, true)
	if len(warnings) != 0 || s.GetNode("host-node1").Spec.Unschedulable {
		t.Errorf("after the restart: %q", warnings)
	}
	onDisk, err = record.Read(root)
	must(t, err)
	if len(rec.Cordoned) != 0 || len(onDisk.Cordoned) != 0 {
		t.Errorf("still listed: %+v %+v", rec.Cordoned, onDisk.Cordoned)
	}

	// A drain that finds a listed Node cordoned already adopts the cordon.
	n := &nodeRun{removal: []NodeRemoval{
		{Partition: "node0", Node: "host-node0", Drain: &drain.Result{Registered: true}},
		{Partition: "node1", Node: "host-node1", Drain: &drain.Result{Registered: true}},
	}}
	n.adopt([]CordonedNode{{Partition: "node0", Node: "host-node0"}})
	if !n.removal[0].Drain.Cordoned || n.removal[1].Drain.Cordoned {
		t.Errorf("adopt: %+v %+v", n.removal[0].Drain, n.removal[1].Drain)
	}
}
