package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	q := url.Values{"fieldSelector": {"spec.nodeName=" + node}, "limit": {strconv.Itoa(podListPage)}}
	all := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for first := true; ; first = false {
		var l corev1.PodList
		u, err := c.do(ctx, request{method: http.MethodGet, kind: "PodList", path: []string{"api/v1/pods"}, query: q}, &l)
		if err != nil {
			return nil, err
		}
		if l.Kind != "" && l.Kind != "PodList" {
			return nil, fmt.Errorf("GET %s: answered %s, not PodList", u, l.Kind)
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
		q.Set("continue", l.Continue)
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
	q := url.Values{"fieldSelector": {"spec.nodeName=" + node}}
	q.Set("watch", "true")
	q.Set("resourceVersion", resourceVersion)
	q.Set("allowWatchBookmarks", "true")
	q.Set("timeoutSeconds", strconv.Itoa(max(1, int(timeout.Seconds()))))
	// A server (or a network) that goes silent would keep the stream open
	// for ever: the request ends a little after the time it was asked for.
	ctx, cancel := context.WithTimeout(ctx, timeout+c.timeout)
	defer cancel()
	u, resp, err := c.send(ctx, c.stream, request{method: http.MethodGet, kind: "watch event", path: []string{"api/v1/pods"}, query: q})
	if err != nil {
		return resourceVersion, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return resourceVersion, nil
			}
			return resourceVersion, fmt.Errorf("watch %s: %w", u, err)
		}
		if len(ev.Object) > maxObjectBytes {
			return resourceVersion, fmt.Errorf("watch %s: event larger than %d bytes", u, maxObjectBytes)
		}
		if ev.Type == EventError {
			var st metav1.Status
			if json.Unmarshal(ev.Object, &st) == nil && st.Code == http.StatusGone {
				return resourceVersion, fmt.Errorf("%w: watch %s: %s", ErrGone, u, st.Message)
			}
			return resourceVersion, fmt.Errorf("watch %s: the API server ended it with an error: %s", u, ev.Object)
		}
		var p corev1.Pod
		if err := json.Unmarshal(ev.Object, &p); err != nil {
			return resourceVersion, fmt.Errorf("watch %s: %s event is not a Pod: %w", u, ev.Type, err)
		}
		switch ev.Type {
		case EventAdded, EventModified, EventDeleted, EventBookmark:
		default:
			return resourceVersion, fmt.Errorf("watch %s: unknown event type %q", u, ev.Type)
		}
		if p.ResourceVersion != "" {
			resourceVersion = p.ResourceVersion
		}
		if ev.Type == EventBookmark {
			continue
		}
		if err := fn(PodEvent{Type: ev.Type, Pod: &p}); err != nil {
			return resourceVersion, err
		}
	}
}
