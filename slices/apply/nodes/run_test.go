package nodes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// The Node side of remove and apply (run.go) against the fake API server;
// the host side is slices/apply's sandbox tests'.

// nodeCluster is an API server with the Nodes of two partitions, a web
// pod and a DaemonSet pod on each; and the record of those partitions,
// whose kubelet kubeconfigs lie in dir.
func nodeCluster(t *testing.T) (*kubeapitest.Server, *record.Record, string) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	dir := t.TempDir()
	rec := &record.Record{Generation: 3}
	for _, p := range []string{"node0", "node1"} {
		node := "host-" + p
		s.SetNode(kubeapitest.Node(node, corev1.ConditionTrue, "KubeletReady", ""))
		s.SetPod(applytest.DrainPod("shop", "web-"+p, node, "ReplicaSet", map[string]string{"app": "web"}))
		s.SetPod(applytest.DrainPod("kube-system", "flannel-"+p, node, "DaemonSet", nil))
		rec.Partitions = append(rec.Partitions, record.Partition{Name: p, NodeName: node, Kubeconfig: filepath.Join(dir, "kubelet-"+p+".conf")})
	}
	return s, rec, dir
}

func runDeletions(t *testing.T, n *Run) []string {
	t.Helper()
	var did []string
	for _, f := range n.Deletions(context.Background()) {
		must(t, f.Delete())
		did = append(did, f.What)
	}
	return did
}

// TestRemoveNodesPlain: with an admin identity, plain remove refuses
// while pods other than DaemonSet pods are bound, naming them; --force
// goes ahead, and the Nodes are deleted once the kubelets are stopped.
func TestRemoveNodesPlain(t *testing.T) {
	s, rec, dir := nodeCluster(t)
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	o := Command{Root: "/", Nodes: Options{Kubeconfig: admin}}
	_, _, err := Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	want := "partition node0: 1 pods are bound to Node host-node0 (shop/web-node0)\npartition node1: 1 pods are bound to Node host-node1 (shop/web-node1)\n(remove --drain evicts them first"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error\n got %v\nwant %s…", err, want)
	}
	if len(s.Evictions()) != 0 || s.GetNode("host-node0").Spec.Unschedulable {
		t.Fatal("a refusal changed the cluster")
	}
	// A dry run shows the refusal as a warning.
	o.DryRun = true
	_, warnings, err := Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err != nil || len(warnings) != 2 || !strings.Contains(warnings[0], "shop/web-node0") {
		t.Fatalf("dry run: %q %v", warnings, err)
	}
	o.DryRun, o.Nodes.Force = false, true
	n, warnings, err := Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err != nil || len(warnings) != 2 {
		t.Fatalf("--force: %q %v", warnings, err)
	}
	defer n.Close()
	if got := strings.Join(runDeletions(t, n), ", "); got != "delete Node host-node0, delete Node host-node1" {
		t.Errorf("deletions: %s", got)
	}
	if s.GetNode("host-node0") != nil || s.GetNode("host-node1") != nil {
		t.Error("Nodes not deleted")
	}
	if r := n.removal[0]; !r.Checked || !r.Deleted || r.Kubeconfig != admin || len(r.Pods) != 2 || r.Pods[0].Reason != drain.ReasonDaemonSet {
		t.Errorf("removal %+v", r)
	}
	// Already gone: deleting again is not an error.
	runDeletions(t, n)

	// An API server that does not answer the admin: refused, unless
	// --force, which leaves the Node.
	s.SetNode(kubeapitest.Node("host-node1", corev1.ConditionTrue, "KubeletReady", ""))
	down := kubeapitest.NewServer(t, kubeapitest.Options{})
	o.Nodes = Options{Kubeconfig: applytest.KubeconfigFor(t, down, filepath.Join(dir, "down.conf"), "kubernetes-admin", "system:masters")}
	down.Close()
	if _, _, err := Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil); err == nil || !strings.Contains(err.Error(), "API server unreachable") ||
		!strings.HasSuffix(err.Error(), "(--force removes the partitions regardless, leaving those Nodes)") {
		t.Fatalf("unreachable: %v", err)
	}
	o.Nodes.Force = true
	n, warnings, err = Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err != nil || len(warnings) != 2 || !strings.HasSuffix(warnings[1], "; its Node stays in the API server") || len(n.Deletions(context.Background())) != 0 {
		t.Fatalf("unreachable, --force: %q %v", warnings, err)
	}
	n.Close()
}

// TestRemoveNodesDrain: --drain drains each Node in turn (a budget holds
// node1's web pod back until it allows one disruption), and a Node the
// API server does not have is nothing to drain.
func TestRemoveNodesDrain(t *testing.T) {
	s, rec, dir := nodeCluster(t)
	rec.Partitions = append(rec.Partitions, record.Partition{Name: "node2", NodeName: "host-node2"}, record.Partition{Name: "old"})
	s.SetPDB(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, DesiredHealthy: 1, CurrentHealthy: 2}})
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	var progress []string
	o := Command{Root: "/", Nodes: Options{Kubeconfig: admin, Drain: true, Timeout: 10 * time.Second, Progress: func(p drain.Progress) {
		progress = append(progress, p.String())
		if p.Phase == drain.PhaseEvicting && len(p.Blocked) > 0 { // the replacement is healthy elsewhere
			s.SetPDB(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
				Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
				Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, DesiredHealthy: 1, CurrentHealthy: 2}})
		}
	}}}
	n, warnings, err := Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "partition old: the record has no Node name") {
		t.Errorf("warnings %q", warnings)
	}
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-node0 shop/web-node1" {
		t.Errorf("evictions %s", got)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "drain host-node1: evicted 0 of 1; PodDisruptionBudget shop/web holds back shop/web-node1: needs 1 healthy pods, has 2, allows 0 disruptions; retrying in 1s") {
		t.Errorf("progress:\n%s", strings.Join(progress, "\n"))
	}
	for i, want := range []string{"host-node0", "host-node1"} {
		if d := n.removal[i].Drain; d == nil || !d.Registered || !d.Cordoned || d.Evicted != 1 || !s.GetNode(want).Spec.Unschedulable {
			t.Errorf("%s: drain %+v", want, d)
		}
	}
	if d := n.removal[2].Drain; d == nil || d.Registered {
		t.Errorf("host-node2: drain %+v", d)
	}
	if got := strings.Join(runDeletions(t, n), ", "); got != "delete Node host-node0, delete Node host-node1, delete Node host-node2" {
		t.Errorf("deletions: %s", got)
	}
}

// TestRemoveNodesDrainRefusedOrFailing: a pod nothing recreates on the
// second Node refuses the drain before any Node is cordoned; a drain that
// times out on the second Node uncordons the first.
func TestRemoveNodesDrainRefusedOrFailing(t *testing.T) {
	s, rec, dir := nodeCluster(t)
	s.SetPod(applytest.DrainPod("dev", "shell", "host-node1", "", nil))
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	o := Command{Root: "/", Nodes: Options{Kubeconfig: admin, Drain: true, Timeout: 100 * time.Millisecond}}
	_, _, err := Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err == nil || !strings.Contains(err.Error(), "Node host-node1 cannot be drained: 1 pods no controller manages, which would be gone for good (dev/shell): --force evicts them") {
		t.Fatalf("error: %v", err)
	}
	if s.GetNode("host-node0").Spec.Unschedulable || len(s.Evictions()) != 0 {
		t.Fatal("a refusal changed the cluster")
	}
	s.DeletePod("dev", "shell")
	s.SetPDB(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, DesiredHealthy: 1, CurrentHealthy: 2}})
	_, _, err = Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err == nil || !strings.Contains(err.Error(), "partition node1: draining Node host-node1: 1 of 1 pods still not evicted after 100ms") ||
		!strings.Contains(err.Error(), "nothing on the host was changed; the Nodes this remove cordoned are schedulable again") {
		t.Fatalf("error: %v", err)
	}
	if s.GetNode("host-node0").Spec.Unschedulable || s.GetNode("host-node1").Spec.Unschedulable {
		t.Error("left cordoned")
	}
}

// TestRemoveNodesWithKubelets: without --kubeconfig each kubelet's own
// credentials list its Node's pods; a kubelet that never joined has
// nothing to check; an API server that does not answer is refused unless
// --force; --drain drains each Node with them; the Nodes stay behind (a
// warning).
func TestRemoveNodesWithKubelets(t *testing.T) {
	s, rec, _ := nodeCluster(t)
	o := Command{Root: "/"}
	// Neither kubelet joined: nothing to check, nothing said.
	n, warnings, err := Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err != nil || len(warnings) != 0 || n.admin != nil || len(n.Deletions(context.Background())) != 0 {
		t.Fatalf("never joined: %q %v", warnings, err)
	}
	if r := n.removal[1]; r.Checked || !strings.Contains(r.Note, "does not exist: the kubelet never joined") {
		t.Errorf("removal %+v", r)
	}
	applytest.KubeconfigFor(t, s, rec.Partitions[0].Kubeconfig, "system:node:host-node0", "system:nodes")
	_, _, err = Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err == nil || err.Error() != "partition node0: 1 pods are bound to Node host-node0 (shop/web-node0)\n(remove --drain evicts them first, honouring their PodDisruptionBudgets; --force removes the partitions with them bound)" {
		t.Fatalf("pods bound: %v", err)
	}
	s.DeletePod("shop", "web-node0")
	n, warnings, err = Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err != nil || len(warnings) != 1 || warnings[0] != "the Nodes host-node0 stay in the API server, NotReady: remove --kubeconfig FILE deletes them (an identity examples/drain-rbac.yaml allows)" {
		t.Fatalf("only a DaemonSet pod: %q %v", warnings, err)
	}
	if r := n.removal[0]; !r.Checked || len(r.Pods) != 1 || r.Deleted {
		t.Errorf("removal %+v", r)
	}
	// Credentials the API server does not accept: a client certificate
	// of another CA.
	other := kubeapitest.NewCA(t, "other")
	cert, key := other.Client(t, "system:node:host-node1", "system:nodes")
	pem := rec.Partitions[1].Kubeconfig + ".pem"
	must(t, os.WriteFile(pem, append(cert, key...), 0o600))
	must(t, os.WriteFile(rec.Partitions[1].Kubeconfig, s.Kubeconfig(t, map[string]string{"client-certificate": pem, "client-key": pem}), 0o600))
	_, _, err = Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err == nil || !strings.Contains(err.Error(), "partition node1: cannot see which pods are bound to Node host-node1 with its kubelet's credentials: ") ||
		!strings.HasSuffix(err.Error(), "(remove --kubeconfig FILE asks with an identity examples/drain-rbac.yaml allows; --force removes the partitions regardless, leaving those Nodes)") {
		t.Fatalf("unusable credentials: %v", err)
	}
	o.Nodes.Force = true
	_, warnings, err = Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err != nil || len(warnings) != 2 {
		t.Fatalf("--force: %q %v", warnings, err)
	}
	// --drain with the kubelets' own credentials: each cordons its own
	// Node and evicts its pods; the Nodes stay.
	applytest.KubeconfigFor(t, s, rec.Partitions[1].Kubeconfig, "system:node:host-node1", "system:nodes")
	o.Nodes = Options{Drain: true}
	n, warnings, err = Prepare(context.Background(), o, "remove", RemoveTargets(rec), nil)
	if err != nil || len(warnings) != 1 || !strings.HasPrefix(warnings[0], "the Nodes host-node0, host-node1 stay in the API server") {
		t.Fatalf("--drain with the kubelets' credentials: %q %v", warnings, err)
	}
	defer n.Close()
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-node1" {
		t.Errorf("evictions %q", got)
	}
	for i, node := range []string{"host-node0", "host-node1"} {
		if d := n.removal[i].Drain; d == nil || !d.Cordoned || !s.GetNode(node).Spec.Unschedulable {
			t.Errorf("%s: %+v", node, d)
		}
	}
	if len(n.Deletions(context.Background())) != 0 {
		t.Error("deletions without an identity allowed to delete")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
