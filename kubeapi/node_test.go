package kubeapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

// TestSetNodeCondition: the condition goes by a strategic-merge patch of
// nodes/NAME/status with exactly the one condition, kubelet's Ready stays;
// its transition time moves only when its status changes, its heartbeat
// at every write; a Node that is not there and another Node are errors
// that say which.
func TestSetNodeCondition(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node1", corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"))
	c := clientAs(t, s, "system:node:host-node1", "system:nodes")
	ctx := context.Background()
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	cond := corev1.NodeCondition{Type: "NumaPartitionDrifted", Status: corev1.ConditionFalse, Reason: "AsPlanned", Message: "as planned"}

	got, err := c.SetNodeCondition(ctx, "host-node1", cond, t0.Add(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if !got.LastTransitionTime.Time.Equal(t0) || !got.LastHeartbeatTime.Time.Equal(t0) {
		t.Errorf("first write: transition %v heartbeat %v, want both %v", got.LastTransitionTime, got.LastHeartbeatTime, t0)
	}
	patches := s.Patches()
	if len(patches) != 1 {
		t.Fatalf("%d patches, want 1", len(patches))
	}
	want := kubeapitest.Patch{Path: "/api/v1/nodes/host-node1/status", ContentType: "application/strategic-merge-patch+json",
		Body: `{"status":{"conditions":[{"type":"NumaPartitionDrifted","status":"False","lastHeartbeatTime":"2026-12-05T10:00:00Z","lastTransitionTime":"2026-12-05T10:00:00Z","reason":"AsPlanned","message":"as planned"}]}}`}
	if patches[0] != want {
		t.Errorf("patch\n%+v\nwant\n%+v", patches[0], want)
	}

	// Same status a minute later: heartbeat moves, transition stays.
	t1 := t0.Add(time.Minute)
	if got, err = c.SetNodeCondition(ctx, "host-node1", cond, t1); err != nil {
		t.Fatal(err)
	}
	if !got.LastTransitionTime.Time.Equal(t0) || !got.LastHeartbeatTime.Time.Equal(t1) {
		t.Errorf("same status: transition %v heartbeat %v, want %v and %v", got.LastTransitionTime, got.LastHeartbeatTime, t0, t1)
	}
	// A new status: both move.
	t2 := t1.Add(time.Minute)
	cond.Status, cond.Reason, cond.Message = corev1.ConditionTrue, "CpusetDrifted", "drifted"
	if got, err = c.SetNodeCondition(ctx, "host-node1", cond, t2); err != nil {
		t.Fatal(err)
	}
	if !got.LastTransitionTime.Time.Equal(t2) || !got.LastHeartbeatTime.Time.Equal(t2) {
		t.Errorf("new status: transition %v heartbeat %v, want both %v", got.LastTransitionTime, got.LastHeartbeatTime, t2)
	}
	n := s.GetNode("host-node1")
	if len(n.Status.Conditions) != 3 {
		t.Fatalf("conditions %+v, want kubelet's two and NumaPartitionDrifted", n.Status.Conditions)
	}
	if ready, ok := kubeapi.ReadyCondition(n); !ok || ready.Status != corev1.ConditionTrue || ready.Reason != "KubeletReady" {
		t.Errorf("kubelet's Ready changed: %+v", ready)
	}
	if d := n.Status.Conditions[2]; d.Type != "NumaPartitionDrifted" || d.Status != corev1.ConditionTrue || d.Reason != "CpusetDrifted" || !d.LastTransitionTime.Time.Equal(t2) {
		t.Errorf("stored condition %+v", d)
	}

	if _, err := c.SetNodeCondition(ctx, "host-node9", cond, t2); !errors.Is(err, kubeapi.ErrForbidden) {
		t.Errorf("another Node's condition: %v, want ErrForbidden", err)
	}
	admin := clientAs(t, s, "admin", "system:masters")
	_, err = admin.SetNodeCondition(ctx, "host-node9", cond, t2)
	if !errors.Is(err, kubeapi.ErrNotRegistered) {
		t.Errorf("a Node not there: %v, want ErrNotRegistered", err)
	} else if want := "reading Node host-node9 before setting its NumaPartitionDrifted condition"; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("error %q does not start with %q", err, want)
	}
}
