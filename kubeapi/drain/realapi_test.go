package drain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

// controlPlane is a real etcd, kube-apiserver and, when it is built,
// kube-controller-manager (only its disruption controller, which keeps
// PodDisruptionBudgets' status) on ports of their own on 127.0.0.1, and
// an admin HTTP client.
type controlPlane struct {
	*kubeapitest.ControlPlane
	// kcm is false when kube-controller-manager is not built yet: the test
	// then keeps the budgets' status itself (disruptionController).
	kcm bool
}

func startControlPlane(t *testing.T) *controlPlane {
	cp := &controlPlane{ControlPlane: kubeapitest.StartControlPlane(t)}
	adminCert, adminKey := cp.CA.Client(t, "kubernetes-admin", "system:masters")
	adminConf := cp.WriteFile(t, "admin.conf", cp.Kubeconfig(t, map[string]any{"client-certificate-data": adminCert, "client-key-data": adminKey}))
	if _, err := os.Stat(filepath.Join(cp.Bin, "kube-controller-manager")); err != nil {
		t.Logf("NOTE: no %s/kube-controller-manager: the test keeps the budgets' status itself, as its disruption controller would", cp.Bin)
		return cp
	}
	cp.kcm = true
	cp.Start(t, "kube-controller-manager", "--kubeconfig="+adminConf, "--controllers=disruption",
		"--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=false")
	return cp
}

func (cp *controlPlane) client(t *testing.T, user map[string]any, name string) *kubeapi.Client {
	t.Helper()
	cfg, err := kubeapi.Load("/", cp.WriteFile(t, name+".conf", cp.Kubeconfig(t, user)))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{})
	t.Cleanup(c.Close)
	return c
}

// call sends an admin request and decodes a 2xx answer into out.
func (cp *controlPlane) call(method, path, contentType string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, cp.URL+path, r)
	if err != nil {
		return err
	}
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := cp.Admin.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode > 299 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func (cp *controlPlane) must(t *testing.T, method, path string, body, out any) {
	t.Helper()
	if err := cp.call(method, path, "", body, out); err != nil {
		t.Fatal(err)
	}
}

// runningPod creates a pod bound to node, owned by a ReplicaSet (or
// owner), and sets its status Running and Ready as its kubelet would.
func (cp *controlPlane) runningPod(t *testing.T, name, node, owner string, labels map[string]string) {
	t.Helper()
	if err := cp.startPod(name, node, owner, labels); err != nil {
		t.Fatal(err)
	}
}

func (cp *controlPlane) startPod(name, node, owner string, labels map[string]string) error {
	p := newPod("default", name, node, labels, owner)
	p.UID = ""
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}
	no := false
	p.Spec.AutomountServiceAccountToken = &no
	if err := cp.call("POST", "/api/v1/namespaces/default/pods", "", p, nil); err != nil {
		return err
	}
	st := map[string]any{"status": map[string]any{"phase": "Running", "conditions": []any{
		map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}}
	return cp.call("PATCH", "/api/v1/namespaces/default/pods/"+name+"/status", "application/merge-patch+json", st, nil)
}

// disruptionController keeps budget default/NAME's status as
// kube-controller-manager's does, for a test without it: healthy are the
// Ready pods it selects that are not being deleted (the eviction API marks
// one disrupted and deletes it), minAvailable of them desired.
func (cp *controlPlane) disruptionController(ctx context.Context, name string) error {
	for ctx.Err() == nil {
		var b policyv1.PodDisruptionBudget
		var l corev1.PodList
		if err := cp.call("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/"+name, "", nil, &b); err != nil {
			return err
		}
		if err := cp.call("GET", "/api/v1/namespaces/default/pods", "", nil, &l); err != nil {
			return err
		}
		healthy := int32(0)
		expected := int32(0)
		for _, p := range l.Items {
			if len(drain.Budgets(p, []policyv1.PodDisruptionBudget{b})) == 0 {
				continue
			}
			expected++
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
					healthy++
				}
			}
		}
		want := b.Spec.MinAvailable.IntVal
		b.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: b.Generation, DesiredHealthy: want, CurrentHealthy: healthy,
			ExpectedPods: expected, DisruptionsAllowed: max(0, healthy-want)}
		// A conflict (the eviction API changed it meanwhile) is retried.
		_ = cp.call("PUT", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/"+name+"/status", "", &b, nil)
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// kubelet plays the kubelets and the ReplicaSet controller for pods
// evicted from node: it deletes them for good (the kubelet confirming the
// stop: grace period 0) and starts a replacement, Ready, on other. It
// returns the first error.
func (cp *controlPlane) kubelet(ctx context.Context, node, other string) error {
	n := 0
	for ctx.Err() == nil {
		var l corev1.PodList
		if err := cp.call("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D"+node, "", nil, &l); err == nil {
			for _, p := range l.Items {
				if p.DeletionTimestamp == nil {
					continue
				}
				zero := int64(0)
				if err := cp.call("DELETE", "/api/v1/namespaces/default/pods/"+p.Name, "", metav1.DeleteOptions{GracePeriodSeconds: &zero}, nil); err != nil {
					return err
				}
				n++
				if err := cp.startPod(fmt.Sprintf("%s-r%d", p.Name, n), other, "ReplicaSet", p.Labels); err != nil {
					return err
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// TestRealAPIServer: against a real kube-apiserver and disruption
// controller, with the identity of examples/drain-rbac.yaml: the budget
// (minAvailable 3, three pods) refuses the evictions (429) until a fourth
// pod is Ready elsewhere, then lets them go one by one as replacements
// become Ready; the Node is cordoned, its DaemonSet pod stays, and the
// Node is deleted. A kubelet's own credentials may list its Node's pods,
// cordon it and evict them, not read budgets or delete it.
func TestRealAPIServer(t *testing.T) {
	cp := startControlPlane(t)
	ctx := context.Background()
	// The identity of examples/drain-rbac.yaml, with a token of its
	// ServiceAccount.
	docs, err := os.ReadFile("../../examples/drain-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(docs), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		path := map[string]string{
			"ClusterRole":        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
			"ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
			"ServiceAccount":     "/api/v1/namespaces/kube-system/serviceaccounts",
		}[obj["kind"].(string)]
		cp.must(t, "POST", path, obj, nil)
	}
	var tr struct {
		Status struct{ Token string } `json:"status"`
	}
	cp.must(t, "POST", "/api/v1/namespaces/kube-system/serviceaccounts/numa-partition-drain/token",
		map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{"expirationSeconds": 3600}}, &tr)
	c := cp.client(t, map[string]any{"token": tr.Status.Token}, "drain")

	for _, n := range []string{"host-node0", "host-other"} {
		cp.must(t, "POST", "/api/v1/nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, nil)
	}
	cp.must(t, "POST", "/api/v1/namespaces/default/serviceaccounts", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, nil)
	web := map[string]string{"app": "web"}
	for _, n := range []string{"web-0", "web-1", "web-2"} {
		cp.runningPod(t, n, "host-node0", "ReplicaSet", web)
	}
	cp.runningPod(t, "flannel-x", "host-node0", "DaemonSet", nil)
	three := intstr.FromInt32(3)
	cp.must(t, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &three, Selector: &metav1.LabelSelector{MatchLabels: web}}}, nil)
	if !cp.kcm {
		dcCtx, stop := context.WithCancel(ctx)
		dcErr := make(chan error, 1)
		go func() { dcErr <- cp.disruptionController(dcCtx, "web") }()
		defer func() {
			stop()
			if err := <-dcErr; err != nil {
				t.Errorf("the disruption controller's stand-in: %v", err)
			}
		}()
	}
	cp.WaitFor(t, 60*time.Second, "budget status (kube-controller-manager's disruption controller)", func() bool {
		var b policyv1.PodDisruptionBudget
		return cp.call("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web", "", nil, &b) == nil &&
			b.Status.ObservedGeneration >= b.Generation && b.Generation > 0 && b.Status.CurrentHealthy == 3
	})

	// A second budget over the same pods: the real API server answers
	// their evictions with 500 ("more than one PodDisruptionBudget"),
	// whatever the budgets allow, so the drain's check refuses them
	// before anything is cordoned or evicted, naming both budgets.
	one := intstr.FromInt32(1)
	cp.must(t, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web-too"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: web}}}, nil)
	if err := c.Evict(ctx, "default", "web-0", ""); err == nil || errors.Is(err, kubeapi.ErrTooManyRequests) || !strings.Contains(err.Error(), "more than one PodDisruptionBudget") {
		t.Errorf("evicting a pod two budgets select: %v, want the API server's 500", err)
	}
	var twice *drain.Refusal
	if _, _, err := drain.Check(ctx, c, "host-node0", drain.Rules{Force: true}); !errors.As(err, &twice) ||
		!strings.Contains(err.Error(), "3 pods that more than one PodDisruptionBudget selects") || !strings.Contains(err.Error(), "default/web, default/web-too") {
		t.Errorf("the check with two budgets over the web pods: %v", err)
	}
	cp.must(t, "DELETE", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web-too", nil, nil)

	// The kubelet's own credentials (Node authorizer, NodeRestriction):
	// its Node's pods, its own cordon and its pods' evictions, yes (the
	// budget answers 429); budgets, another Node, deleting its own, no.
	nodeCert, nodeKey := cp.CA.Client(t, "system:node:host-node0", "system:nodes")
	kc := cp.client(t, map[string]any{"client-certificate-data": nodeCert, "client-key-data": nodeKey}, "kubelet")
	if pods, err := kc.PodsOnNode(ctx, "host-node0"); err != nil || len(pods) != 4 {
		t.Fatalf("the kubelet lists its Node's pods: %d, %v", len(pods), err)
	}
	if _, err := kc.PodsOnNode(ctx, "host-other"); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("the kubelet lists another Node's pods: %v", err)
	}
	if err := kc.Evict(ctx, "default", "web-0", ""); !errors.Is(err, kubeapi.ErrTooManyRequests) {
		t.Errorf("the kubelet evicts a pod bound to its Node: %v, want the budget's 429", err)
	}
	if _, err := kc.PodDisruptionBudgets(ctx, "default"); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("the kubelet lists budgets: %v", err)
	}
	if err := kc.SetUnschedulable(ctx, "host-other", true); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("the kubelet cordons another Node: %v", err)
	}
	if err := kc.DeleteNode(ctx, "host-node0"); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("the kubelet deletes its Node: %v", err)
	}
	if err := kc.SetUnschedulable(ctx, "host-node0", true); err != nil {
		t.Errorf("the kubelet cordons its own Node: %v", err)
	}
	if err := kc.SetUnschedulable(ctx, "host-node0", false); err != nil {
		t.Errorf("the kubelet uncordons its own Node: %v", err)
	}

	// Events on the Node, as apply and remove record them: the kubelet's
	// credentials (the Node authorizer's rules) and examples/drain-rbac.yaml's
	// identity may create them, the API server's validation takes their
	// form (a message cut to 1 KiB included), and the query `kubectl
	// describe node` makes (involvedObject uid the Node's name) finds them.
	t1 := time.Now()
	for i, api := range []*kubeapi.Client{kc, c} {
		e, err := kubeapi.NodeEvent("host-node0", "host", corev1.EventTypeNormal, "Drained", fmt.Sprintf("event %d: %s", i, strings.Repeat("é", 600)), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := api.CreateEvent(ctx, e); err != nil {
			t.Errorf("event %d: %v", i, err)
		}
	}
	t.Logf("2 Events created in %s", time.Since(t1).Round(time.Millisecond))
	var events corev1.EventList
	cp.must(t, "GET", "/api/v1/events?fieldSelector=involvedObject.kind%3DNode,involvedObject.name%3Dhost-node0,involvedObject.uid%3Dhost-node0", nil, &events)
	if len(events.Items) != 2 || events.Items[0].Source.Component != "numa-partition" || !strings.HasSuffix(events.Items[1].Message, "é…") {
		t.Errorf("the Node's events: %+v", events.Items)
	}

	simCtx, stop := context.WithCancel(ctx)
	simErr := make(chan error, 1)
	blocked := make(chan string, 1)
	var progress []string
	var mu sync.Mutex
	t0 := time.Now()
	go func() {
		// Once the budget has held the pods back: a fourth pod Ready
		// elsewhere, and from then on a replacement for each evicted one.
		select {
		case <-simCtx.Done():
			simErr <- nil
			return
		case msg := <-blocked:
			t.Logf("held back after %s: %s", time.Since(t0).Round(time.Millisecond), msg)
		}
		if err := cp.startPod("web-extra", "host-other", "ReplicaSet", web); err != nil {
			simErr <- err
			return
		}
		simErr <- cp.kubelet(simCtx, "host-node0", "host-other")
	}()
	defer func() {
		stop()
		if err := <-simErr; err != nil {
			t.Errorf("the kubelet's and ReplicaSet's stand-in: %v", err)
		}
	}()
	res, err := drain.Drain(ctx, c, "host-node0", drain.Options{Timeout: 3 * time.Minute, Progress: func(p drain.Progress) {
		mu.Lock()
		progress = append(progress, fmt.Sprintf("%6.2fs %s", time.Since(t0).Seconds(), p))
		mu.Unlock()
		if len(p.Blocked) > 0 {
			select {
			case blocked <- p.String():
			default:
			}
		}
	}})
	mu.Lock()
	t.Logf("progress:\n%s", strings.Join(progress, "\n"))
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("drained 3 pods under a minAvailable budget in %.2f s", res.Seconds)
	if !res.Cordoned || res.Evicted != 3 {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "PodDisruptionBudget default/web holds back default/web-0, default/web-1, default/web-2: needs 3 healthy pods, has 3, allows 0 disruptions") {
		t.Error("the budget was not named holding the pods back")
	}
	n, err := c.Node(ctx, "host-node0")
	if err != nil || !n.Spec.Unschedulable {
		t.Fatalf("cordoned: %v %v", n, err)
	}
	pods, err := c.PodsOnNode(ctx, "host-node0")
	if err != nil || len(pods) != 1 || pods[0].Name != "flannel-x" {
		t.Errorf("left on the Node: %v %v", pods, err)
	}
	if err := c.DeleteNode(ctx, "host-node0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Node(ctx, "host-node0"); !errors.Is(err, kubeapi.ErrNotRegistered) {
		t.Errorf("after delete: %v", err)
	}

	// A figure: the drain of bulkPods pods no budget covers, each deleted
	// by the stand-in kubelet as soon as it sees it evicted.
	const bulkPods = 30
	cp.must(t, "POST", "/api/v1/nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "host-bulk"}}, nil)
	for i := range bulkPods {
		cp.runningPod(t, fmt.Sprintf("bulk-%02d", i), "host-bulk", "ReplicaSet", map[string]string{"app": "bulk"})
	}
	bulkCtx, stopBulk := context.WithCancel(ctx)
	bulkErr := make(chan error, 1)
	go func() { bulkErr <- cp.kubelet(bulkCtx, "host-bulk", "host-other") }()
	res, err = drain.Drain(ctx, c, "host-bulk", drain.Options{Timeout: 3 * time.Minute})
	stopBulk()
	if err := <-bulkErr; err != nil {
		t.Errorf("the stand-in kubelet of host-bulk: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Evicted != bulkPods {
		t.Errorf("evicted %d of %d", res.Evicted, bulkPods)
	}
	t.Logf("drained %d pods no budget covers in %.2f s (cordon, list, %d evictions, wait until gone: 1 s polls)", bulkPods, res.Seconds, bulkPods)

	// A kubelet's own credentials drain its own Node (remove --drain
	// without --kubeconfig), a budget's 429 named by the API's cause.
	cp.must(t, "POST", "/api/v1/nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "host-node1"}}, nil)
	for _, n := range []string{"web-a", "web-b"} {
		cp.runningPod(t, n, "host-node1", "ReplicaSet", web)
	}
	cert1, key1 := cp.CA.Client(t, "system:node:host-node1", "system:nodes")
	kc1 := cp.client(t, map[string]any{"client-certificate-data": cert1, "client-key-data": key1}, "kubelet1")
	ownCtx, stopOwn := context.WithCancel(ctx)
	ownErr := make(chan error, 1)
	go func() { ownErr <- cp.kubelet(ownCtx, "host-node1", "host-other") }()
	progress = nil
	res, err = drain.Drain(ctx, kc1, "host-node1", drain.Options{Timeout: 3 * time.Minute, Progress: func(p drain.Progress) {
		progress = append(progress, p.String())
	}})
	stopOwn()
	if err := <-ownErr; err != nil {
		t.Errorf("the stand-in kubelet of host-node1: %v", err)
	}
	t.Logf("drained with its kubelet's credentials:\n%s", strings.Join(progress, "\n"))
	if err != nil || res.Evicted != 2 || !res.Cordoned {
		t.Fatalf("drain with the kubelet's credentials: %+v %v", res, err)
	}
}
