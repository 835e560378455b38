package kubeapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// Watch event types (metav1.WatchEvent.Type).
const (
	EventAdded    = "ADDED"
	EventModified = "MODIFIED"
	EventDeleted  = "DELETED"
	EventBookmark = "BOOKMARK"
	EventError    = "ERROR"
)

// PodEvent is one change of a watch on pods.
type PodEvent struct {
	Type string
	Pod  *corev1.Pod
}

// PodListOnNode lists the pods bound to node (GET /api/v1/pods with the
// field selector spec.nodeName=node, which a kubelet's credentials may
// list for their own Node), page by page, with Node's errors. The list's
// resourceVersion, the first page's (every page of one list is of the
// same snapshot), is where a watch of the same pods starts.
func (c *Client) PodListOnNode(ctx context.Context, node string) (*corev1.PodList, error) {
	if err := checkNodeName(node); err != nil {
		return nil, err
	}
	cs, err := c.typed()
	if err != nil {
		return nil, err
	}
	opts := metav1.ListOptions{FieldSelector: "spec.nodeName=" + node, Limit: podListPage}
	all := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for first := true; ; first = false {
		l, err := cs.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return nil, c.apiErr(err, http.MethodGet, nil, "api/v1/pods")
		}
		if first {
			all.ResourceVersion = l.ResourceVersion
		}
		for _, p := range l.Items {
			// A server that ignored the selector must not make
			// another Node's pods look bound to this one.
			if p.Spec.NodeName == node {
				all.Items = append(all.Items, p)
			}
		}
		if l.Continue == "" {
			return all, nil
		}
		opts.Continue = l.Continue
	}
}

// WatchPodsOnNode watches the pods bound to node from resourceVersion
// on, calling fn for each change in order, until ctx ends, the API server
// ends the watch (after at most about timeout: it is asked to, and the
// request is cut a little later if it does not), fn fails, or the stream
// breaks. It returns the resourceVersion of the last event seen (the
// one to watch on from) and why it stopped: nil for an ordinary end,
// ErrGone when resourceVersion is too old (list again).
func (c *Client) WatchPodsOnNode(ctx context.Context, node, resourceVersion string, timeout time.Duration, fn func(PodEvent) error) (string, error) {
	if err := checkNodeName(node); err != nil {
		return resourceVersion, err
	}
	cs, err := c.watching()
	if err != nil {
		return resourceVersion, err
	}
	secs := int64(max(1, int(timeout.Seconds())))
	// A server (or a network) that goes silent would keep the stream open
	// for ever: the request ends a little after the time it was asked for.
	ctx, cancel := context.WithTimeout(ctx, timeout+c.timeout)
	defer cancel()
	w, err := watchPods(ctx, cs, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node,
		ResourceVersion: resourceVersion, AllowWatchBookmarks: true, TimeoutSeconds: &secs})
	if err != nil {
		return resourceVersion, c.apiErr(err, http.MethodGet, nil, "api/v1/pods")
	}
	defer w.Stop()
	start, events := time.Now(), 0
	for ev := range w.ResultChan() {
		events++
		if ev.Type == watch.Error {
			err := c.apiErr(apierrors.FromObject(ev.Object), http.MethodGet, nil, "api/v1/pods")
			return resourceVersion, fmt.Errorf("watch: %w", err)
		}
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return resourceVersion, fmt.Errorf("watch /api/v1/pods: %s event is a %T, not a Pod", ev.Type, ev.Object)
		}
		if p.ResourceVersion != "" {
			resourceVersion = p.ResourceVersion
		}
		if ev.Type == watch.Bookmark {
			continue
		}
		if err := fn(PodEvent{Type: string(ev.Type), Pod: p}); err != nil {
			return resourceVersion, err
		}
	}
	// client-go answers a watch request that timed out or whose
	// connection broke with a watch that ends at once (as client-go's
	// reflector, take one that ends within a second, empty, for that).
	if events == 0 && time.Since(start) < time.Second && ctx.Err() == nil {
		return resourceVersion, fmt.Errorf("%w: the watch of /api/v1/pods ended at once, with no event", ErrUnreachable)
	}
	return resourceVersion, nil
}

// watchPods is the typed client's Watch of pods in every namespace, but
// not retried: client-go retries a watch whose request timed out up to 10
// times, which would hide a stalled API server from the pod cache (whose
// status and readers say it fails) for 10 request timeouts; the cache's
// own loop retries, with a backoff.
func watchPods(ctx context.Context, cs kubernetes.Interface, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return cs.CoreV1().RESTClient().Get().Resource("pods").
		VersionedParams(&opts, scheme.ParameterCodec).
		Timeout(time.Duration(*opts.TimeoutSeconds) * time.Second).
		MaxRetries(0).
		Watch(ctx)
}
