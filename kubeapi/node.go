package kubeapi

import corev1 "k8s.io/api/core/v1"

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
