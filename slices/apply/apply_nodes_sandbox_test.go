package apply

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// nodeFixture is applytest.NewFixture(n) whose partitions joined a cluster as
// Nodes sandbox-tnodeI.
func nodeFixture(n int) *applytest.Fixture {
	f := applytest.NewFixture(n)
	for i := range f.Plan.Partitions {
		p := &f.Plan.Partitions[i]
		p.Memory = nil
		p.NodeName = "sandbox-" + p.Name
		p.Kubelet.Kubeconfig = "/etc/kubernetes/kubelet-" + p.Name + ".conf"
	}
	return f
}

// dryRunDisrupts fails t unless the dry run rep disrupts Node node only,
// for reason, with actions (joined by "; "), and evicted nothing.
func dryRunDisrupts(t *testing.T, s *kubeapitest.Server, rep *Report, node, reason, actions string) {
	t.Helper()
	if len(rep.Nodes) != 1 || rep.Nodes[0].Node != node || rep.Nodes[0].Reason != reason ||
		strings.Join(rep.Nodes[0].Actions, "; ") != actions {
		t.Errorf("dry run: nodes %+v", rep.Nodes)
	}
	if len(s.Evictions()) != 0 {
		t.Error("the dry run evicted")
	}
}

// TestApplyDrain: on an applied host whose three partitions joined a
// cluster, tnode0's kubelet settings change while its state pins a web
// pod. Plain apply refuses, naming apply --drain; apply --drain --dry-run
// lists what it would do with tnode0's Node only, and changes nothing; a
// drain a budget holds back past --drain-timeout uncordons the Node and
// leaves the host as it was; then apply --drain evicts the pod, waits
// for kubelet to let go of it, restarts the kubelet on fresh state and
// uncordons the Node, never touching tnode1's or tnode2's. A plan
// without tnode2 then drains its Node and deletes it.
func TestApplyDrain(t *testing.T) {
	e := newEnv(t)
	f := nodeFixture(3)
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	ctx := context.Background()
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	for _, p := range f.Plan.Partitions {
		s.SetNode(kubeapitest.Node(p.NodeName, corev1.ConditionTrue, "KubeletReady", ""))
		// Its kubelet reports as soon as it is back (here: already).
		applytest.Heartbeat(s, p.NodeName, time.Now().Add(time.Hour))
		s.SetPod(applytest.DrainPod("kube-system", "flannel-"+p.Name, p.NodeName, "DaemonSet", nil))
		s.SetPod(applytest.DrainPod("shop", "web-"+p.Name, p.NodeName, "ReplicaSet", map[string]string{"app": "web"}))
	}
	admin := applytest.KubeconfigFor(t, s, filepath.Join(t.TempDir(), "admin.conf"), "kubernetes-admin", "system:masters")
	// kubelet ran and pinned web-tnode0's CPUs.
	writeState(t, e, []string{"uid-web-tnode0"}, "uid-web-tnode0")
	f.SetSliceCPUs("tnode0", "0-1")
	before := e.snapshot(t, f)
	unchanged := func(what string) {
		t.Helper()
		if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
			t.Errorf("%s changed the host:\n%s", what, strings.Join(d, "\n"))
		}
		for _, p := range f.Plan.Partitions {
			if s.GetNode(p.NodeName).Spec.Unschedulable {
				t.Errorf("%s left Node %s cordoned", what, p.NodeName)
			}
		}
	}
	withDrain := func(timeout time.Duration) func(*Options) {
		return func(o *Options) {
			o.Nodes = nodes.Options{Kubeconfig: admin, Drain: true, Timeout: timeout, Poll: 50 * time.Millisecond}
		}
	}

	_, err = e.apply(t, f, nil)
	if err == nil || !strings.Contains(err.Error(), "drain partition tnode0's Node first — apply --drain does") {
		t.Fatalf("plain apply: %v", err)
	}
	unchanged("the refused apply")

	rep, err := e.apply(t, f, func(o *Options) { withDrain(time.Minute)(o); o.DryRun = true })
	applytest.Must(t, err)
	dryRunDisrupts(t, s, rep, "sandbox-tnode0", nodes.ReasonFreshState,
		"cordon; evict 1 pods (shop/web-tnode0); wait until kubelet-tnode0.service's manager state holds no running pods; restart kubelet-tnode0.service on fresh CPU/Memory Manager state; uncordon once Ready")
	unchanged("the dry run")

	s.SetPDB(applytest.Budget(0))
	var midDrain *record.Record
	_, err = e.apply(t, f, func(o *Options) {
		withDrain(300 * time.Millisecond)(o)
		o.Nodes.Progress = func(p drain.Progress) {
			if p.Phase == drain.PhaseCordoned { // what a kill here would leave
				rec, err := record.Read(e.sb.Root)
				applytest.Must(t, err)
				midDrain = rec
			}
		}
	})
	if err == nil || !strings.Contains(err.Error(), "partition tnode0: draining Node sandbox-tnode0: 1 of 1 pods still not evicted after 300ms") ||
		!strings.Contains(err.Error(), "the Nodes this apply cordoned are schedulable again") {
		t.Fatalf("a drain held back: %v", err)
	}
	unchanged("the failed drain")
	if midDrain == nil || !midDrain.Pending || !reflect.DeepEqual(midDrain.Cordoned, []record.CordonedNode{{Partition: "tnode0", Node: "sandbox-tnode0"}}) {
		t.Errorf("the record while the drain ran: %+v", midDrain)
	}
	if rec, err := record.Read(e.sb.Root); err != nil || rec.Pending || len(rec.Cordoned) != 0 {
		t.Errorf("the record after the failed drain: %+v %v", rec, err)
	}

	// kubelet cleans the pod up a moment after its eviction.
	s.SetPDB(applytest.Budget(1))
	podDir := e.sb.Path("var/lib/kubelet-tnode0/pods/uid-web-tnode0")
	cleaned := make(chan struct{})
	go func() {
		defer close(cleaned)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if slices.Contains(s.Evictions(), "shop/web-tnode0") {
				time.Sleep(2 * time.Second) // longer than the drain takes: apply must wait for it
				_ = os.RemoveAll(podDir)
				return
			}
		}
	}()
	var steps0 []string
	rep, err = e.apply(t, f, func(o *Options) {
		withDrain(time.Minute)(o)
		o.BeforeStep = func(_ int, st transaction.Step) error {
			steps0 = append(steps0, st.String())
			if _, err := os.Stat(podDir); st.Kind() == transaction.KindKubeletState && err == nil {
				t.Errorf("%s while kubelet still had the drained pod", st)
			}
			if st.Kind() == transaction.KindKubeletState && !s.GetNode("sandbox-tnode0").Spec.Unschedulable {
				t.Errorf("%s with its Node schedulable", st)
			}
			return nil
		}
	})
	<-cleaned
	applytest.Must(t, err)
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-tnode0" {
		t.Errorf("evictions %q", got)
	}
	steps := strings.Join(rep.Steps, "\n")
	if !slices.ContainsFunc(steps0, func(s string) bool { return strings.HasPrefix(s, "kubelet-state kubelet-tnode0.service: move") }) ||
		!strings.Contains(steps, "kubelet-state kubelet-tnode0.service: move") || strings.Contains(steps, "kubelet-tnode1") {
		t.Errorf("steps:\n%s", steps)
	}
	if len(rep.Nodes) != 1 || !rep.Nodes[0].Uncordoned || rep.Nodes[0].Drain == nil || rep.Nodes[0].Drain.Evicted != 1 {
		t.Errorf("report nodes %+v", rep.Nodes)
	}
	for _, p := range f.Plan.Partitions {
		if s.GetNode(p.NodeName).Spec.Unschedulable {
			t.Errorf("Node %s left cordoned", p.NodeName)
		}
	}
	if s.GetPod("shop", "web-tnode1") == nil || s.GetPod("shop", "web-tnode2") == nil {
		t.Error("a pod of an untouched partition was evicted")
	}

	if rec, err := record.Read(e.sb.Root); err != nil || rec.Pending || len(rec.Cordoned) != 0 {
		t.Errorf("the record after the drain: %+v %v", rec, err)
	}

	// An apply killed mid-drain left tnode1's Node cordoned and listed:
	// status says so, and the next apply uncordons it once Ready.
	rec, err := record.Read(e.sb.Root)
	applytest.Must(t, err)
	rec.Cordoned = []record.CordonedNode{{Partition: "tnode1", Node: "sandbox-tnode1"}}
	b, err := rec.Marshal()
	applytest.Must(t, err)
	applytest.Must(t, host.WriteFileAtomic(e.sb.Root, record.Path, b, 0o644))
	n := s.GetNode("sandbox-tnode1")
	n.Spec.Unschedulable = true
	s.SetNode(n)
	st, err := status.Read(ctx, status.Options{Root: e.sb.Root, Sysfs: e.sysfs, Systemd: e.m, NoAPI: true})
	applytest.Must(t, err)
	if !slices.Contains(st.Problems, "an interrupted drain left Node sandbox-tnode1 cordoned (partition tnode1): the next apply uncordons it once Ready, or kubectl uncordon sandbox-tnode1") {
		t.Errorf("status problems %q", st.Problems)
	}
	rep, err = e.apply(t, f, func(o *Options) { o.Nodes = nodes.Options{Kubeconfig: admin} })
	applytest.Must(t, err)
	if rep.Changed || s.GetNode("sandbox-tnode1").Spec.Unschedulable {
		t.Errorf("the next apply: changed %v, Node cordoned %v, warnings %q", rep.Changed, s.GetNode("sandbox-tnode1").Spec.Unschedulable, rep.Warnings)
	}
	if rec, err := record.Read(e.sb.Root); err != nil || len(rec.Cordoned) != 0 {
		t.Errorf("the record after the next apply: %+v %v", rec, err)
	}

	// Two partitions: tnode2 goes, its Node with it.
	f2 := nodeFixture(2)
	f2.SetSliceCPUs("tnode0", "0-1")
	_, err = e.apply(t, f2, func(o *Options) { o.Nodes = nodes.Options{Kubeconfig: admin} })
	if err == nil || !strings.Contains(err.Error(), "partition tnode2: 1 pods are bound to Node sandbox-tnode2 (shop/web-tnode2)") {
		t.Fatalf("apply without tnode2, without --drain: %v", err)
	}
	s.SetPDB(applytest.Budget(1)) // web-tnode0's replacement is healthy elsewhere
	rep, err = e.apply(t, f2, withDrain(time.Minute))
	applytest.Must(t, err)
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-tnode0 shop/web-tnode2" {
		t.Errorf("evictions %q", got)
	}
	if s.GetNode("sandbox-tnode2") != nil || s.GetNode("sandbox-tnode1") == nil || s.GetNode("sandbox-tnode1").Spec.Unschedulable {
		t.Error("not only tnode2's Node deleted")
	}
	if len(rep.Nodes) != 1 || rep.Nodes[0].Reason != nodes.ReasonPartitionGone || !rep.Nodes[0].Deleted {
		t.Errorf("report nodes %+v", rep.Nodes)
	}
	if st, err := e.m.Unit(ctx, "kubelet-tnode2.service"); err != nil || st.ActiveState != "inactive" {
		t.Errorf("kubelet-tnode2.service: %+v %v", st, err)
	}
}

// TestApplyDrainsANamespaceRebuild: a change of tnode1's mount namespace
// holder (a new hugepage view, say) restarts it, and with it containerd
// and kubelet in a new namespace, so kubelet re-creates every pod of the
// partition. Without --drain apply says so; with --drain it drains
// tnode1's Node (only) before the restart and uncordons it after, and
// the dry run lists just that.
func TestApplyDrainsANamespaceRebuild(t *testing.T) {
	e := newEnv(t)
	f := nodeFixture(2)
	holder := func(binds string) {
		const name = "mountns-tnode1.service"
		content := "[Unit]\nDescription=mount namespace of tnode1\n[Service]\nSlice=tnode1.slice\n# " + binds + "\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n"
		for i := range f.Bundle.Files {
			if strings.HasSuffix(f.Bundle.Files[i].Path, "/"+name) {
				f.Bundle.Files[i].Content = []byte(content)
				return
			}
		}
		p := "etc/systemd/system/" + name
		f.Bundle.Files = append(f.Bundle.Files, bundle.File{Path: p, Mode: 0o644, Content: []byte(content)})
		f.Bundle.Units = append(f.Bundle.Units, bundle.Unit{Name: name, Phase: bundle.PhaseNetwork, Partition: "tnode1",
			Enable: true, Start: true, Files: []string{p}, RecreatesPods: true})
	}
	holder("view 1")
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	for _, p := range f.Plan.Partitions {
		s.SetNode(kubeapitest.Node(p.NodeName, corev1.ConditionTrue, "KubeletReady", ""))
		applytest.Heartbeat(s, p.NodeName, time.Now().Add(time.Hour))
		s.SetPod(applytest.DrainPod("shop", "web-"+p.Name, p.NodeName, "ReplicaSet", map[string]string{"app": "web"}))
	}
	admin := applytest.KubeconfigFor(t, s, filepath.Join(t.TempDir(), "admin.conf"), "kubernetes-admin", "system:masters")
	withDrain := func(o *Options) {
		o.Nodes = nodes.Options{Kubeconfig: admin, Drain: true, Timeout: time.Minute, Poll: 50 * time.Millisecond}
	}
	ctx := context.Background()
	pid := func() uint32 {
		t.Helper()
		st, err := e.m.Unit(ctx, "mountns-tnode1.service")
		applytest.Must(t, err)
		return st.MainPID
	}

	// Without --drain: restarted, and said to re-create the pods.
	before := pid()
	holder("view 2")
	rep, err := e.apply(t, f, func(o *Options) { o.Nodes = nodes.Options{Kubeconfig: admin} })
	applytest.Must(t, err)
	if !slices.ContainsFunc(rep.Warnings, func(w string) bool {
		return strings.Contains(w, "partition tnode1: mountns-tnode1.service restarts (its files changed)") &&
			strings.Contains(w, "every pod of Node sandbox-tnode1 is re-created, without a drain; apply --drain drains")
	}) || len(rep.Nodes) != 0 || len(s.Evictions()) != 0 {
		t.Errorf("apply without --drain: warnings %q, nodes %+v, evictions %q", rep.Warnings, rep.Nodes, s.Evictions())
	}
	if pid() == before {
		t.Error("the holder was not restarted")
	}

	holder("view 3")
	rep, err = e.apply(t, f, func(o *Options) { withDrain(o); o.DryRun = true })
	applytest.Must(t, err)
	dryRunDisrupts(t, s, rep, "sandbox-tnode1", nodes.ReasonNamespaceRebuilt,
		"cordon; evict 1 pods (shop/web-tnode1); restart mountns-tnode1.service: containerd and kubelet restart in a new mount namespace, and every pod left on the Node is re-created; uncordon once Ready")

	before = pid()
	restarted := false
	rep, err = e.apply(t, f, func(o *Options) {
		withDrain(o)
		o.BeforeStep = func(_ int, st transaction.Step) error {
			if st.Action == (transaction.RestartUnit{Unit: "mountns-tnode1.service"}) {
				restarted = true
				if !s.GetNode("sandbox-tnode1").Spec.Unschedulable || s.GetPod("shop", "web-tnode1") != nil {
					t.Errorf("%s before its Node was drained", st)
				}
			}
			return nil
		}
	})
	applytest.Must(t, err)
	if !restarted || pid() == before {
		t.Errorf("the holder was not restarted (step seen %v)", restarted)
	}
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-tnode1" {
		t.Errorf("evictions %q", got)
	}
	if len(rep.Nodes) != 1 || rep.Nodes[0].Reason != nodes.ReasonNamespaceRebuilt || !rep.Nodes[0].Uncordoned || rep.Nodes[0].Deleted {
		t.Errorf("report nodes %+v", rep.Nodes)
	}
	for _, p := range f.Plan.Partitions {
		if s.GetNode(p.NodeName).Spec.Unschedulable {
			t.Errorf("Node %s left cordoned", p.NodeName)
		}
	}
	if s.GetPod("shop", "web-tnode0") == nil {
		t.Error("the untouched partition's pod was evicted")
	}
}
