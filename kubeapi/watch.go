package kubeapi

import (
	"context"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// PodListOnNode lists the pods bound to node (GET /api/v1/pods with the
// field selector spec.nodeName=node, which a kubelet's credentials may
// list for their own Node), page by page, with Node's errors. The list's
// resourceVersion, the first page's (every page of one list is of the
// same snapshot), is where a watch of the same pods starts.
func (c *Client) PodListOnNode(ctx context.Context, node string) (*corev1.PodList, error) {
	opts := metav1.ListOptions{Limit: podListPage}
	all := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for first := true; ; first = false {
		l, err := c.podPage(ctx, node, opts)
		if err != nil {
			return nil, err
		}
		if first {
			all.ResourceVersion = l.ResourceVersion
		}
		all.Items = append(all.Items, l.Items...)
		if l.Continue == "" {
			return all, nil
		}
		opts.Continue = l.Continue
	}
}

// podPage is one page of the list of the pods bound to node, by opts
// (limit, continue, resourceVersion) and the field selector.
func (c *Client) podPage(ctx context.Context, node string, opts metav1.ListOptions) (*corev1.PodList, error) {
	if err := checkNodeName(node); err != nil {
		return nil, err
	}
	cs, err := c.typed()
	if err != nil {
		return nil, err
	}
	opts.FieldSelector = "spec.nodeName=" + node
	l, err := cs.CoreV1().Pods("").List(ctx, opts)
	if err != nil {
		return nil, c.apiErr(err, http.MethodGet, nil, "api/v1/pods")
	}
	// A server that ignored the selector must not make another Node's
	// pods look bound to this one.
	mine := l.Items[:0]
	for _, p := range l.Items {
		if p.Spec.NodeName == node {
			mine = append(mine, p)
		}
	}
	l.Items = mine
	return l, nil
}

// watchPodsOnNode watches the pods bound to node, by opts (from
// resourceVersion, for timeoutSeconds) and the field selector: the
// typed client's Watch of pods in every namespace, but not retried by
// client-go, which would hide a stalled API server from the pod cache (its
// status and its readers say it fails) for up to 10 request timeouts: the
// cache retries, with a backoff.
func (c *Client) watchPodsOnNode(ctx context.Context, node string, opts metav1.ListOptions) (watch.Interface, error) {
	if err := checkNodeName(node); err != nil {
		return nil, err
	}
	cs, err := c.watching()
	if err != nil {
		return nil, err
	}
	opts.FieldSelector, opts.Watch = "spec.nodeName="+node, true
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	w, err := cs.CoreV1().RESTClient().Get().Resource("pods").
		VersionedParams(&opts, scheme.ParameterCodec).Timeout(timeout).MaxRetries(0).Watch(ctx)
	return w, c.apiErr(err, http.MethodGet, nil, "api/v1/pods")
}
