package kubeapi

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	kubedrain "k8s.io/kubectl/pkg/drain"
)

// What draining a Node needs (kubeapi/drain decides, these do the
// requests). A kubelet's own credentials may do most of them for its own
// Node: the Node authorizer and NodeRestriction let it list the pods bound
// to it, patch it (cordon) and evict those pods; not list
// PodDisruptionBudgets or delete the Node (examples/drain-rbac.yaml is the
// role that may).

// podListPage bounds one page of a pod list: 250 pods of ~10 KiB each stay
// far below maxObjectBytes.
const podListPage = 250

// SetUnschedulable cordons (true) or uncordons (false) Node name as
// kubectl cordon and kubectl drain do, with their code (k8s.io/kubectl's
// drain.RunCordonOrUncordon): it reads the Node and, unless it is so
// already, patches spec.unschedulable (a strategic merge patch; false
// removes the field, its default). A Node that does not exist is
// ErrNotRegistered.
func (c *Client) SetUnschedulable(ctx context.Context, name string, on bool) error {
	n, err := c.Node(ctx, name)
	if err != nil {
		return err
	}
	cs, err := c.typed()
	if err != nil {
		return err
	}
	err = kubedrain.RunCordonOrUncordon(&kubedrain.Helper{Ctx: ctx, Client: cs}, n, on)
	return c.apiErr(err, http.MethodPatch, ErrNotRegistered, "api/v1/nodes", name)
}

// DeleteNode deletes Node name (its pods are then garbage-collected by
// kube-controller-manager). A Node that does not exist is
// ErrNotRegistered.
func (c *Client) DeleteNode(ctx context.Context, name string) error {
	if err := checkNodeName(name); err != nil {
		return err
	}
	cs, err := c.typed()
	if err != nil {
		return err
	}
	err = cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	return c.apiErr(err, http.MethodDelete, ErrNotRegistered, "api/v1/nodes", name)
}

// PodsOnNode lists the pods bound to Node name, in every namespace
// (fieldSelector spec.nodeName, which a kubelet's credentials may list
// for their own Node), page by page: PodListOnNode's items.
func (c *Client) PodsOnNode(ctx context.Context, name string) ([]corev1.Pod, error) {
	l, err := c.PodListOnNode(ctx, name)
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// PodDisruptionBudgets lists the policy/v1 PodDisruptionBudgets of a
// namespace.
func (c *Client) PodDisruptionBudgets(ctx context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error) {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return nil, fmt.Errorf("namespace %q: %s", namespace, errs[0])
	}
	cs, err := c.typed()
	if err != nil {
		return nil, err
	}
	l, err := cs.PolicyV1().PodDisruptionBudgets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, c.apiErr(err, http.MethodGet, nil, "apis/policy/v1/namespaces", namespace, "poddisruptionbudgets")
	}
	return l.Items, nil
}

// Evict asks the API server to evict pod namespace/name through the
// policy/v1 Eviction subresource, which honours PodDisruptionBudgets: a
// budget that does not allow it now is ErrTooManyRequests (429, the
// APIError's Causes name the budget), a pod already gone ErrNotFound, a
// pod replaced by another of the same name (uid is not its UID; "" skips
// the check) ErrConflict. The pod is then deleted with its own grace
// period.
func (c *Client) Evict(ctx context.Context, namespace, name string, uid types.UID) error {
	if err := checkPodName(namespace, name); err != nil {
		return err
	}
	cs, err := c.typed()
	if err != nil {
		return err
	}
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if uid != "" {
		ev.DeleteOptions = &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	}
	err = cs.PolicyV1().Evictions(namespace).Evict(ctx, ev)
	return c.apiErr(err, http.MethodPost, nil, "api/v1/namespaces", namespace, "pods", name, "eviction")
}

// checkNodeName refuses what is not a Node name: a DNS subdomain, so that
// it cannot change the request's path.
func checkNodeName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("node name %q: %s", name, errs[0])
	}
	return nil
}

// checkPodName refuses what is not a namespace and pod name.
func checkPodName(namespace, name string) error {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", namespace, errs[0])
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("pod name %q: %s", name, errs[0])
	}
	return nil
}
