package apply

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// TestRemoveNodes: on an applied host whose partitions joined a cluster,
// plain remove refuses while a web pod is bound to a partition's Node
// (seen with the kubelets' own credentials below the root, or with an
// admin's) and leaves the host as it was; remove --kubeconfig --drain evicts it, stops
// and removes everything, and deletes both Nodes; the report says so.
func TestRemoveNodes(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	for i := range f.Plan.Partitions {
		p := &f.Plan.Partitions[i]
		p.Memory = nil
		p.NodeName = "sandbox-" + p.Name
		p.Kubelet.Kubeconfig = "/etc/kubernetes/kubelet-" + p.Name + ".conf"
	}
	useFakeKubelets(f)
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	ctx := context.Background()
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	for _, p := range f.Plan.Partitions {
		s.SetNode(kubeapitest.Node(p.NodeName, corev1.ConditionTrue, "KubeletReady", ""))
		s.SetPod(applytest.DrainPod("kube-system", "flannel-"+p.Name, p.NodeName, "DaemonSet", nil))
	}
	s.SetPod(applytest.DrainPod("shop", "web-0", "sandbox-tnode1", "ReplicaSet", map[string]string{"app": "web"}))
	dir := t.TempDir()
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")

	// Without --kubeconfig: each kubelet's own credentials below the root,
	// to an API server in the root's network namespace.
	k := kubeapitest.NewServer(t, kubeapitest.Options{Listener: listenIn(t, e.sb.Root)})
	k.SetPod(applytest.DrainPod("shop", "web-0", "sandbox-tnode1", "ReplicaSet", map[string]string{"app": "web"}))
	for _, p := range f.Plan.Partitions {
		cert, key := k.CA.Client(t, "system:node:"+p.NodeName, "system:nodes")
		pem := "/var/lib/kubelet-" + p.Name + "/pki/kubelet-client-current.pem"
		writeInSandbox(t, e, pem, append(cert, key...))
		writeInSandbox(t, e, p.Kubelet.Kubeconfig, k.Kubeconfig(t, map[string]string{"client-certificate": pem, "client-key": pem}))
	}
	_, err = Remove(ctx, e.opts())
	if err == nil || !strings.Contains(err.Error(), "refused before it changed anything on the host: partition tnode1: 1 pods are bound to Node sandbox-tnode1 (shop/web-0)\n(remove --drain evicts them first") {
		t.Fatalf("plain remove with the kubelets' credentials: %v", err)
	}

	o := e.opts()
	o.Nodes = nodes.Options{Kubeconfig: admin}
	_, err = Remove(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "refused before it changed anything on the host: partition tnode1: 1 pods are bound to Node sandbox-tnode1 (shop/web-0)") {
		t.Fatalf("plain remove: %v", err)
	}
	if rec, err := record.Read(e.sb.Root); err != nil || rec == nil {
		t.Fatalf("the record after a refused remove: %v %v", rec, err)
	}
	if st, err := e.m.Unit(ctx, "tnode1.slice"); err != nil || st.ActiveState != "active" {
		t.Fatalf("tnode1.slice after a refused remove: %+v %v", st, err)
	}

	o.Nodes.Drain = true
	var progress []string
	o.Nodes.Progress = func(p drain.Progress) { progress = append(progress, p.String()) }
	rep, err := Remove(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Evictions(), " "); got != "shop/web-0" {
		t.Errorf("evictions %q", got)
	}
	for _, p := range f.Plan.Partitions {
		if s.GetNode(p.NodeName) != nil {
			t.Errorf("Node %s not deleted", p.NodeName)
		}
	}
	if len(rep.Nodes) != 2 || !rep.Nodes[1].Deleted || rep.Nodes[1].Drain == nil || rep.Nodes[1].Drain.Evicted != 1 || !rep.Nodes[0].Drain.Cordoned {
		t.Errorf("report nodes %+v", rep.Nodes)
	}
	acts := strings.Join(rep.Actions, "\n")
	if stop, del := strings.Index(acts, "stop kubelet-tnode1.service"), strings.Index(acts, "delete Node sandbox-tnode1"); stop < 0 || del < stop || !strings.Contains(acts, "delete Node sandbox-tnode0") {
		t.Errorf("actions (the Nodes go after the stops):\n%s", acts)
	}
	if want := "drain sandbox-tnode1: evicted 1 of 1"; !strings.Contains(strings.Join(progress, "\n"), want) {
		t.Errorf("progress %q", progress)
	}
	if rec, err := record.Read(e.sb.Root); err != nil || rec != nil {
		t.Fatalf("the record after remove: %v %v", rec, err)
	}
	// The Events on the Nodes (#40), with the identity that drained them;
	// none for the refused removes, and none through the kubelets'.
	var want []string
	for _, p := range f.Plan.Partitions {
		pods := map[string]string{"tnode0": "0", "tnode1": "1"}[p.Name]
		want = append(want,
			"sandbox-"+p.Name+" Normal DrainStarted: numa-partition remove: cordoned, evicting "+pods+" pods within 5m0s (partition "+p.Name+" is removed)",
			"sandbox-"+p.Name+" Normal Drained: numa-partition remove: drained: "+pods+" pods evicted in D")
	}
	for _, p := range f.Plan.Partitions {
		want = append(want, "sandbox-"+p.Name+" Normal PartitionRemoved: numa-partition remove: partition "+p.Name+" removed (generation "+itoa(rep.Generation)+"), its kubelet stopped for good; the Node is deleted next")
	}
	applytest.SameLines(t, "events", applytest.EventLines(s), want)
	if len(k.Events()) != 0 {
		t.Errorf("Events through the kubelets' credentials: %+v", k.Events())
	}
}
