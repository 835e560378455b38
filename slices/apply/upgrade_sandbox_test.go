package apply

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// renderWithKubelets renders as renderNodeFixture(n) does, each kubelet
// unit naming the executable its partition's plan gives it, as render's
// ExecStart does: a new kubelet changes its unit, which restarts it.
func renderWithKubelets(n int) func(*planner.Plan) (bundle.Bundle, error) {
	base := renderNodeFixture(n)
	return func(plan *planner.Plan) (bundle.Bundle, error) {
		b, err := base(plan)
		if err != nil {
			return b, err
		}
		for _, p := range plan.Partitions {
			for i := range b.Files {
				if strings.HasSuffix(b.Files[i].Path, "/kubelet-"+p.Name+".service") {
					b.Files[i].Content = append(slices.Clip(b.Files[i].Content), "# runs "+p.Kubelet.Binary+"\n"...)
				}
			}
		}
		return b, nil
	}
}

// withKubelets is nodeFixture(2)'s plan, tnode0's kubelet binary k0 and
// tnode1's k1.
func withKubelets(k0, k1 string) *planner.Plan {
	p := withPolicy(2, "none")
	p.Partitions[0].Kubelet.Binary, p.Partitions[1].Kubelet.Binary = k0, k1
	return p
}

// TestApplyDrainRollsANewKubelet (#37): a kubelet upgrade as an operator
// rolls it. Without --drain a new kubelet restarts in place: no Node is
// cordoned, no pod evicted (its pods keep running, as with any kubelet
// restart). With --drain the canary (tnode1 alone on the new kubelet) has
// its Node drained, its kubelet restarted and the Node uncordoned, and
// tnode0's is never touched; the upgrade of both then goes in waves, each
// Node drained before its kubelet restarts and uncordoned before the next
// is cordoned, as kubeadm's upgrade drains a Node before its kubelet
// moves. No kubelet here restarts on fresh manager state (policy none):
// the new executable alone is the reason.
func TestApplyDrainRollsANewKubelet(t *testing.T) {
	e := newEnv(t)
	applyPlan := planApplier(t, e, renderWithKubelets(2))
	const old, canary = "/usr/bin/kubelet", "/opt/kubernetes/v1.37.3/kubelet"
	_, err := applyPlan(withKubelets(old, old), nil)
	applytest.Must(t, err)

	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	setPods := func() {
		for _, p := range nodeFixture(2).Plan.Partitions {
			s.SetPod(applytest.DrainPod("kube-system", "flannel-"+p.Name, p.NodeName, "DaemonSet", nil))
			s.SetPod(applytest.DrainPod("shop", "web-"+p.Name, p.NodeName, "ReplicaSet", map[string]string{"app": "web"}))
		}
	}
	for _, p := range nodeFixture(2).Plan.Partitions {
		s.SetNode(kubeapitest.Node(p.NodeName, corev1.ConditionTrue, "KubeletReady", ""))
		applytest.Heartbeat(s, p.NodeName, time.Now().Add(time.Hour))
	}
	setPods()
	s.SetPDB(applytest.Budget(1))
	admin := applytest.KubeconfigFor(t, s, filepath.Join(t.TempDir(), "admin.conf"), "kubernetes-admin", "system:masters")
	cordoned := func(node string) bool { return s.GetNode(node).Spec.Unschedulable }
	// What each kubelet restart saw of the cluster.
	var seen []string
	drained := func(o *Options) {
		o.Nodes = nodes.Options{Kubeconfig: admin, Drain: true, Timeout: time.Minute, Poll: 50 * time.Millisecond,
			// The Deployment's replacement runs once a Node is schedulable.
			Progress: func(p drain.Progress) {
				if p.Phase == drain.PhaseCordoned {
					s.SetPDB(applytest.Budget(1))
				}
			}}
		o.BeforeStep = func(_ int, st transaction.Step) error {
			if r, ok := st.Action.(transaction.RestartUnit); ok && strings.HasPrefix(r.Unit, "kubelet-") {
				seen = append(seen, r.Unit+": cordoned tnode0="+boolText(cordoned("sandbox-tnode0"))+
					" tnode1="+boolText(cordoned("sandbox-tnode1"))+" evicted="+strings.Join(s.Evictions(), ","))
			}
			return nil
		}
	}

	// Without --drain: restarted in place, nothing evicted or cordoned.
	rep, err := applyPlan(withKubelets(old, canary), nil)
	applytest.Must(t, err)
	// (The fixture's kubelets are stand-ins: preflight warns of binaries
	// and kubeconfigs; none says anything of a drain.)
	if len(rep.Nodes) != 0 || len(s.Evictions()) != 0 || cordoned("sandbox-tnode1") ||
		slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "drain") }) {
		t.Errorf("apply without --drain: nodes %+v, evictions %q, warnings %q", rep.Nodes, s.Evictions(), rep.Warnings)
	}
	_, err = applyPlan(withKubelets(old, old), nil)
	applytest.Must(t, err)

	// The canary's dry run names its Node only, and why.
	rep, err = applyPlan(withKubelets(old, canary), func(o *Options) { drained(o); o.DryRun = true })
	applytest.Must(t, err)
	dryRunDisrupts(t, s, rep, "sandbox-tnode1", nodes.ReasonNewSoftware,
		"cordon; evict 1 pods (shop/web-tnode1); evictions of shop/web-tnode1 gated by PodDisruptionBudget shop/web (needs 1 healthy pods, has 2, allows 1 disruptions); restart on the new executables (kubelet "+old+" → "+canary+"); uncordon once Ready")

	// The canary: tnode1 drained, restarted, uncordoned; tnode0 untouched.
	rep, err = applyPlan(withKubelets(old, canary), drained)
	applytest.Must(t, err)
	want := []string{"kubelet-tnode1.service: cordoned tnode0=no tnode1=yes evicted=shop/web-tnode1"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("the canary's kubelet restart saw:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if len(rep.Nodes) != 1 || rep.Nodes[0].Reason != nodes.ReasonNewSoftware || !rep.Nodes[0].Uncordoned || len(rep.Waves) != 0 {
		t.Errorf("the canary's report: nodes %+v, waves %v", rep.Nodes, rep.Waves)
	}
	gen := rep.Generation
	applytest.SameLines(t, "the canary's Events", applytest.EventLines(s), []string{
		"sandbox-tnode1 Normal DrainStarted: numa-partition apply: cordoned, evicting 1 pods within 1m0s (new executables: kubelet " + old + " → " + canary + ")",
		"sandbox-tnode1 Normal Drained: numa-partition apply: drained: 1 pods evicted in D",
		"sandbox-tnode1 Normal PartitionApplied: numa-partition apply: applied generation " + itoa(gen) + ": kubelet config, restart kubelet-tnode1.service",
		"sandbox-tnode1 Normal Uncordoned: numa-partition apply: uncordoned: Ready again since kubelet-tnode1.service restarted",
	})

	// Both on the new kubelet: tnode0's wave alone (tnode1 runs it already).
	seen = nil
	setPods()
	s.SetPDB(applytest.Budget(1))
	rep, err = applyPlan(withKubelets(canary, canary), drained)
	applytest.Must(t, err)
	if len(seen) != 1 || !strings.HasPrefix(seen[0], "kubelet-tnode0.service: cordoned tnode0=yes tnode1=no evicted=") ||
		!strings.HasSuffix(seen[0], ",shop/web-tnode0") || len(rep.Nodes) != 1 || rep.Nodes[0].Partition != "tnode0" {
		t.Errorf("rolled to tnode0: restarts saw %q, nodes %+v", seen, rep.Nodes)
	}

	// Both back at once: two waves, one Node at a time.
	seen = nil
	setPods()
	s.SetPDB(applytest.Budget(1))
	rep, err = applyPlan(withKubelets(old, old), drained)
	applytest.Must(t, err)
	if !reflect.DeepEqual(rep.Waves, [][]string{{"tnode0"}, {"tnode1"}}) || len(seen) != 2 ||
		!strings.Contains(seen[0], "kubelet-tnode0.service: cordoned tnode0=yes tnode1=no") ||
		!strings.Contains(seen[1], "kubelet-tnode1.service: cordoned tnode0=no tnode1=yes") {
		t.Errorf("both rolled back: waves %v, restarts saw:\n%s", rep.Waves, strings.Join(seen, "\n"))
	}
	for _, n := range []string{"sandbox-tnode0", "sandbox-tnode1"} {
		if cordoned(n) {
			t.Errorf("Node %s left cordoned", n)
		}
	}
}
