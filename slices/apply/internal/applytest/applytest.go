// Package applytest holds the test helpers that slices/apply's tests and
// its parts' (slices/apply/nodes, slices/apply/transaction) share: pods,
// budgets and kubeconfigs of a fake API server (kubeapi/kubeapitest), and
// its Events as lines; the hand-built plan and bundle the transaction's
// and the sandbox's tests apply (Fixture), and the big hosts' (BigHost).
package applytest

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

// DrainPod is a running pod name in namespace ns on node, owned by a
// controller of kind owner ("" for none), with labels.
func DrainPod(ns, name, node, owner string, labels map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: labels},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if owner != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: owner, Name: "o", UID: "o", Controller: &yes}}
	}
	return p
}

// KubeconfigFor writes a kubeconfig of s for user cn in groups at path.
func KubeconfigFor(t *testing.T, s *kubeapitest.Server, path, cn string, groups ...string) string {
	t.Helper()
	cert, key := s.CA.Client(t, cn, groups...)
	pem := path + ".pem"
	if err := os.WriteFile(pem, append(cert, key...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, s.Kubeconfig(t, map[string]string{"client-certificate": pem, "client-key": pem}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Budget is PodDisruptionBudget shop/web of the pods labelled app=web,
// allowing allowed disruptions.
func Budget(allowed int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, DesiredHealthy: 1, CurrentHealthy: 1 + allowed}}
}

// Heartbeat sets Node name's Ready condition's heartbeat to at, keeping
// the rest (its cordon).
func Heartbeat(s *kubeapitest.Server, name string, at time.Time) {
	n := s.GetNode(name)
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].LastHeartbeatTime = metav1.NewTime(at)
		}
	}
	s.SetNode(n)
}

// EventLines are s's Events as "node type reason: message", a drain's
// duration as D.
func EventLines(s *kubeapitest.Server) []string {
	took := regexp.MustCompile(` in [0-9.]+m?s$`)
	var out []string
	for _, e := range s.Events() {
		out = append(out, e.InvolvedObject.Name+" "+e.Type+" "+e.Reason+": "+took.ReplaceAllString(e.Message, " in D"))
	}
	return out
}

// SameLines fails t when got is not want, listing both.
func SameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
