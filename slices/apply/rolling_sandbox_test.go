package apply

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/preflight"
)

// renderNodeFixture renders plan as render would for nodeFixture(n):
// each kubelet's manager settings follow its partition's CPU Manager
// policy, and the plan is in the bundle (bundle.PlanPath), where a
// rolling apply reads the plan the host runs.
func renderNodeFixture(n int) func(*planner.Plan) (bundle.Bundle, error) {
	return func(plan *planner.Plan) (bundle.Bundle, error) {
		f := nodeFixture(n)
		for _, p := range plan.Partitions {
			for i, u := range f.Bundle.Units {
				if u.Partition == p.Name && u.KubeletState != nil {
					f.Bundle.Units[i].KubeletState = &bundle.KubeletState{Dir: u.KubeletState.Dir,
						Settings: "cpu=" + p.Kubelet.CPUManagerPolicy + " partitionCPUs=" + p.CPUs.String()}
				}
			}
		}
		data, err := json.MarshalIndent(plan, "", "  ")
		if err != nil {
			return bundle.Bundle{}, err
		}
		f.Bundle.Files = append(f.Bundle.Files, bundle.File{Path: bundle.PlanPath, Mode: 0o644, Content: append(data, '\n')})
		f.Plan = plan
		return f.Typed()
	}
}

// planApplier applies a plan rendered by render on e's host, as cmd's
// apply does (a rolling apply renders the plans on the way with it), with
// mod's options.
func planApplier(t *testing.T, e *env, render func(*planner.Plan) (bundle.Bundle, error)) func(*planner.Plan, func(*Options)) (*Report, error) {
	return func(plan *planner.Plan, mod func(*Options)) (*Report, error) {
		t.Helper()
		b, err := render(plan)
		applytest.Must(t, err)
		o := e.opts()
		// The fixture's plan names no kubelet binary, kubeconfig or CA:
		// its stand-in kubelets join no cluster (as test/sandbox's).
		ig, err := preflight.ParseIgnore([]string{"all"})
		applytest.Must(t, err)
		o.IgnorePreflightErrors = ig
		// As cmd's: the plan on the way from the host's, rendered.
		o.WaveBundle = func(previous []byte, take func(string) bool) (bundle.Bundle, error) {
			p, err := planner.BetweenFile("/"+bundle.PlanPath, previous, plan, take)
			if err != nil {
				return bundle.Bundle{}, err
			}
			return render(p)
		}
		if mod != nil {
			mod(&o)
		}
		return Apply(t.Context(), o, b)
	}
}

// withPolicy is nodeFixture(n)'s plan with every kubelet's CPU Manager
// policy set to policy.
func withPolicy(n int, policy string) *planner.Plan {
	p := nodeFixture(n).Plan
	for i := range p.Partitions {
		p.Partitions[i].Kubelet.CPUManagerPolicy = policy
	}
	return p
}

// TestApplyRollsOutOneNodeAtATime (#25): both partitions' kubelets
// restart on fresh state while each pins a web pod of one Deployment.
// apply --drain goes in waves: tnode0's Node is drained, its kubelet
// restarted and the Node uncordoned before tnode1's is cordoned, so the
// Deployment always has a schedulable Node (draining both first
// deadlocked it under its PodDisruptionBudget). A second wave held back
// past --drain-timeout stops there: the first stays applied, the second
// is rolled back and its Node schedulable, and apply again finishes it.
func TestApplyRollsOutOneNodeAtATime(t *testing.T) {
	e := newEnv(t)
	render := renderNodeFixture(2)
	applyPlan := planApplier(t, e, render)
	old, next := withPolicy(2, "static"), withPolicy(2, "none")
	_, err := applyPlan(old, nil)
	applytest.Must(t, err)

	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	for _, p := range old.Partitions {
		s.SetNode(kubeapitest.Node(p.NodeName, corev1.ConditionTrue, "KubeletReady", ""))
		applytest.Heartbeat(s, p.NodeName, time.Now().Add(time.Hour))
		s.SetPod(applytest.DrainPod("kube-system", "flannel-"+p.Name, p.NodeName, "DaemonSet", nil))
		s.SetPod(applytest.DrainPod("shop", "web-"+p.Name, p.NodeName, "ReplicaSet", map[string]string{"app": "web"}))
		writeStateOf(t, e, p.Name, []string{"uid-web-" + p.Name}, "uid-web-"+p.Name)
	}
	s.SetPDB(applytest.Budget(1))
	admin := applytest.KubeconfigFor(t, s, filepath.Join(t.TempDir(), "admin.conf"), "kubernetes-admin", "system:masters")
	// kubelet cleans an evicted pod up a moment later.
	stop := make(chan struct{})
	var cleaner sync.WaitGroup
	cleaner.Add(1)
	go func() {
		defer cleaner.Done()
		cleaned := 0
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			evictions := s.Evictions()
			for _, ev := range evictions[cleaned:] {
				name := strings.TrimPrefix(ev, "shop/web-")
				time.Sleep(200 * time.Millisecond)
				_ = os.RemoveAll(e.sb.Path("var/lib/kubelet-" + name + "/pods/uid-web-" + name))
			}
			cleaned = len(evictions)
		}
	}()
	defer func() { close(stop); cleaner.Wait() }()
	cordoned := func(node string) bool { return s.GetNode(node).Spec.Unschedulable }

	// The Deployment's controller and the scheduler, as far as the budget
	// goes: an evicted web pod's replacement runs, and the budget allows
	// a disruption again, once a Node is schedulable for it. So when a
	// Node is cordoned, the budget is back only if the other is not.
	replacements := true
	other := map[string]string{"sandbox-tnode0": "sandbox-tnode1", "sandbox-tnode1": "sandbox-tnode0"}
	// What each kubelet restart saw of the cluster.
	var seen []string
	drained := func(timeout time.Duration) func(*Options) {
		return func(o *Options) {
			o.Nodes = nodes.Options{Kubeconfig: admin, Drain: true, Timeout: timeout, Poll: 50 * time.Millisecond,
				Progress: func(p drain.Progress) {
					if replacements && p.Phase == drain.PhaseCordoned && !cordoned(other[p.Node]) {
						s.SetPDB(applytest.Budget(1))
					}
				}}
			o.BeforeStep = func(_ int, st transaction.Step) error {
				if st.Kind() == transaction.KindKubeletState {
					seen = append(seen, st.String()+": cordoned tnode0="+
						boolText(cordoned("sandbox-tnode0"))+" tnode1="+boolText(cordoned("sandbox-tnode1"))+
						" evicted="+strings.Join(s.Evictions(), ","))
				}
				return nil
			}
		}
	}
	gen := func() int {
		rec, err := record.Read(e.sb.Root)
		applytest.Must(t, err)
		return rec.Generation
	}
	g0 := gen()

	// The Events on the Nodes since the last call (#40).
	seenEvents := 0
	events := func() []string {
		all := applytest.EventLines(s)
		defer func() { seenEvents = len(all) }()
		return all[seenEvents:]
	}
	rep, err := applyPlan(next, func(o *Options) { drained(time.Minute)(o); o.DryRun = true })
	applytest.Must(t, err)
	if !reflect.DeepEqual(rep.Waves, [][]string{{"tnode0"}, {"tnode1"}}) || len(s.Evictions()) != 0 {
		t.Errorf("dry run: waves %v, evictions %v", rep.Waves, s.Evictions())
	}
	applytest.SameLines(t, "the dry run's Events", events(), nil)

	// Both Nodes drained before either kubelet restarts (what apply did
	// before it rolled, and does with --max-unavailable 2): the second
	// drain waits for a budget that cannot come back.
	_, err = applyPlan(next, func(o *Options) { drained(time.Second)(o); o.Nodes.MaxUnavailable = 2 })
	if err == nil || !strings.Contains(err.Error(), "partition tnode1: draining Node sandbox-tnode1: 1 of 1 pods still not evicted after 1s") ||
		!strings.Contains(err.Error(), "nothing on the host was changed") {
		t.Fatalf("--max-unavailable 2: %v", err)
	}
	if gen() != g0 || cordoned("sandbox-tnode0") || cordoned("sandbox-tnode1") || len(seen) != 0 {
		t.Errorf("after the deadlocked drain: generation %d (want %d), cordoned %v %v, restarts %q", gen(), g0, cordoned("sandbox-tnode0"), cordoned("sandbox-tnode1"), seen)
	}
	applytest.SameLines(t, "the deadlocked drain's Events", events(), []string{
		"sandbox-tnode0 Normal DrainStarted: numa-partition apply: cordoned, evicting 1 pods within 1s (kubelet-tnode0.service restarts on fresh CPU/Memory Manager state)",
		"sandbox-tnode0 Normal Drained: numa-partition apply: drained: 1 pods evicted in D",
		"sandbox-tnode1 Normal DrainStarted: numa-partition apply: cordoned, evicting 1 pods within 1s (kubelet-tnode1.service restarts on fresh CPU/Memory Manager state)",
		"sandbox-tnode1 Warning DrainFailed: numa-partition apply: nothing on the host was changed: draining Node sandbox-tnode1: 1 of 1 pods still not evicted after 1s (shop/web-tnode1): PodDisruptionBudget shop/web holds back shop/web-tnode1: needs 1 healthy pods, has 2, allows 0 disruptions",
		"sandbox-tnode0 Normal Uncordoned: numa-partition apply: uncordoned: the apply gave up before it changed the host",
		"sandbox-tnode1 Normal Uncordoned: numa-partition apply: uncordoned: the apply gave up before it changed the host",
	})
	// web-tnode0 was evicted: its replacement runs on tnode0 again, its
	// CPUs pinned by kubelet.
	time.Sleep(500 * time.Millisecond) // the cleaner is done with the eviction
	s.SetPod(applytest.DrainPod("shop", "web-tnode0", "sandbox-tnode0", "ReplicaSet", map[string]string{"app": "web"}))
	writeStateOf(t, e, "tnode0", []string{"uid-web-tnode0"}, "uid-web-tnode0")
	s.SetPDB(applytest.Budget(1))

	rep, err = applyPlan(next, drained(time.Minute))
	applytest.Must(t, err)
	if !reflect.DeepEqual(rep.Waves, [][]string{{"tnode0"}, {"tnode1"}}) {
		t.Errorf("waves %v", rep.Waves)
	}
	want := []string{
		"kubelet-state kubelet-tnode0.service: move /var/lib/kubelet-tnode0/cpu_manager_state, /var/lib/kubelet-tnode0/memory_manager_state aside: cordoned tnode0=yes tnode1=no evicted=shop/web-tnode0,shop/web-tnode0",
		"kubelet-state kubelet-tnode1.service: move /var/lib/kubelet-tnode1/cpu_manager_state, /var/lib/kubelet-tnode1/memory_manager_state aside: cordoned tnode0=no tnode1=yes evicted=shop/web-tnode0,shop/web-tnode0,shop/web-tnode1",
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("the kubelet restarts saw:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if len(rep.Nodes) != 2 || !rep.Nodes[0].Uncordoned || !rep.Nodes[1].Uncordoned || rep.Generation != g0+2 || gen() != g0+2 {
		t.Errorf("report: nodes %+v, generation %d (record %d), want %d", rep.Nodes, rep.Generation, gen(), g0+2)
	}
	if cordoned("sandbox-tnode0") || cordoned("sandbox-tnode1") {
		t.Error("a Node left cordoned")
	}
	// Each wave's, in order: the Node drained, the partition applied, the
	// Node uncordoned, before the next is cordoned.
	wave := func(node string, generation int, timeout string) []string {
		return []string{
			"sandbox-" + node + " Normal DrainStarted: numa-partition apply: cordoned, evicting 1 pods within " + timeout + " (kubelet-" + node + ".service restarts on fresh CPU/Memory Manager state)",
			"sandbox-" + node + " Normal Drained: numa-partition apply: drained: 1 pods evicted in D",
			"sandbox-" + node + " Normal PartitionApplied: numa-partition apply: applied generation " + itoa(generation) + ": manager state of kubelet-" + node + ".service moved aside, restart kubelet-" + node + ".service",
			"sandbox-" + node + " Normal Uncordoned: numa-partition apply: uncordoned: Ready again since kubelet-" + node + ".service restarted",
		}
	}
	applytest.SameLines(t, "the rolling apply's Events", events(), slices.Concat(wave("tnode0", g0+1, "1m0s"), wave("tnode1", g0+2, "1m0s")))
	host, err := os.ReadFile(e.sb.Path(bundle.PlanPath))
	applytest.Must(t, err)
	if want, _ := render(next); !slices.ContainsFunc(want.Files, func(f bundle.File) bool { return f.Path == bundle.PlanPath && string(f.Content) == string(host) }) {
		t.Error("after the last wave the host does not run the new plan")
	}

	// Back to static, with tnode1's pod held by its budget: the first wave
	// goes, the second stops at its drain.
	seen, replacements = nil, false
	time.Sleep(500 * time.Millisecond) // the cleaner is done with the evictions
	for _, p := range old.Partitions {
		s.SetPod(applytest.DrainPod("shop", "web-"+p.Name, p.NodeName, "ReplicaSet", map[string]string{"app": "web"}))
		writeStateOf(t, e, p.Name, []string{"uid-web-" + p.Name}, "uid-web-"+p.Name)
	}
	s.SetPDB(applytest.Budget(1))
	holdSecond := func(o *Options) {
		drained(500 * time.Millisecond)(o)
		before := o.BeforeStep
		o.BeforeStep = func(i int, st transaction.Step) error {
			if st.Kind() == transaction.KindKubeletState && strings.Contains(st.String(), "tnode0") {
				s.SetPDB(applytest.Budget(0)) // tnode1's drain comes after this wave
			}
			return before(i, st)
		}
	}
	_, err = applyPlan(old, holdSecond)
	if err == nil || !strings.Contains(err.Error(), "rolling apply stopped at partitions tnode1") ||
		!strings.Contains(err.Error(), "partitions tnode0 are applied with their new settings, generation "+itoa(g0+3)) {
		t.Fatalf("a second wave held back: %v", err)
	}
	if gen() != g0+3 || cordoned("sandbox-tnode0") || cordoned("sandbox-tnode1") {
		t.Errorf("after the held-back wave: generation %d (want %d), cordoned %v %v", gen(), g0+3, cordoned("sandbox-tnode0"), cordoned("sandbox-tnode1"))
	}
	applytest.SameLines(t, "the held-back wave's Events", events(), append(wave("tnode0", g0+3, "500ms"),
		"sandbox-tnode1 Normal DrainStarted: numa-partition apply: cordoned, evicting 1 pods within 500ms (kubelet-tnode1.service restarts on fresh CPU/Memory Manager state)",
		"sandbox-tnode1 Warning DrainFailed: numa-partition apply: nothing on the host was changed: draining Node sandbox-tnode1: 1 of 1 pods still not evicted after 500ms (shop/web-tnode1): PodDisruptionBudget shop/web holds back shop/web-tnode1: needs 1 healthy pods, has 1, allows 0 disruptions",
		"sandbox-tnode1 Normal Uncordoned: numa-partition apply: uncordoned: the apply gave up before it changed the host"))
	s.SetPDB(applytest.Budget(1))
	seen = nil
	rep, err = applyPlan(old, drained(time.Minute))
	applytest.Must(t, err)
	if len(rep.Waves) != 0 || len(rep.Nodes) != 1 || rep.Nodes[0].Partition != "tnode1" || !rep.Nodes[0].Uncordoned {
		t.Errorf("apply again: waves %v, nodes %+v", rep.Waves, rep.Nodes)
	}
}

func boolText(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
