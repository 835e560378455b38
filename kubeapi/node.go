package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ReadyCondition is the Node's Ready condition; false when it has none (a
// Node just created, before its kubelet's first status update).
func ReadyCondition(n *corev1.Node) (corev1.NodeCondition, bool) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c, true
		}
	}
	return corev1.NodeCondition{}, false
}

// Quantities is a resource list as strings ("cpu": "6", "memory":
// "31Gi"), the way kubectl prints them; nil for an empty list.
func Quantities(l corev1.ResourceList) map[string]string {
	if len(l) == 0 {
		return nil
	}
	m := make(map[string]string, len(l))
	for name, q := range l {
		m[string(name)] = q.String()
	}
	return m
}

// SetNodeCondition sets cond on Node name's status, as node-problem-
// detector does: a strategic-merge PATCH of /api/v1/nodes/NAME/status,
// whose conditions merge by type, so kubelet's own conditions are left as
// they are. It reads the Node first: lastTransitionTime stays the
// current condition's while the status is unchanged (a restarted writer
// keeps it too), else it is now; lastHeartbeatTime is now on every
// write. It returns the condition written. A kubelet's credentials may
// do both for its own Node (the Node authorizer). A Node that does not
// exist is ErrNotRegistered.
func (c *Client) SetNodeCondition(ctx context.Context, name string, cond corev1.NodeCondition, now time.Time) (corev1.NodeCondition, error) {
	n, err := c.Node(ctx, name)
	if err != nil {
		return corev1.NodeCondition{}, fmt.Errorf("reading Node %s before setting its %s condition: %w", name, cond.Type, err)
	}
	t := metav1.NewTime(now.UTC().Truncate(time.Second)) // the API keeps seconds
	cond.LastHeartbeatTime, cond.LastTransitionTime = t, t
	for _, old := range n.Status.Conditions {
		if old.Type == cond.Type && old.Status == cond.Status && !old.LastTransitionTime.IsZero() {
			cond.LastTransitionTime = old.LastTransitionTime
		}
	}
	type status struct {
		Conditions []corev1.NodeCondition `json:"conditions"`
	}
	body, err := json.Marshal(struct {
		Status status `json:"status"`
	}{status{[]corev1.NodeCondition{cond}}})
	if err != nil {
		return corev1.NodeCondition{}, fmt.Errorf("encoding the %s condition of Node %s: %w", cond.Type, name, err)
	}
	cs, err := c.typed()
	if err != nil {
		return corev1.NodeCondition{}, err
	}
	out, err := cs.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
	if err != nil {
		err = c.apiErr(err, http.MethodPatch, ErrNotRegistered, "api/v1/nodes", name, "status")
		return corev1.NodeCondition{}, fmt.Errorf("setting the %s condition of Node %s: %w", cond.Type, name, err)
	}
	for _, got := range out.Status.Conditions {
		if got.Type == cond.Type && got.Status == cond.Status {
			return cond, nil
		}
	}
	return corev1.NodeCondition{}, fmt.Errorf("PATCH /api/v1/nodes/%s/status: the answer holds no %s condition with status %s", name, cond.Type, cond.Status)
}
