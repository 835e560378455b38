package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Events on a partition's Node (#40): what apply and remove do to it is
// recorded as core/v1 Events, where `kubectl describe node` and `kubectl
// get events` show them, the way kubelet records its own Node's events
// (client-go's tools/record: one Event per occurrence, count 1, named
// <node>.<unix nanoseconds in hex>, in namespace default). Recording is
// best effort: an Event that cannot be created is logged, never an error
// of the command, and the time all of one command's Events take is
// bounded (EventBudget).

const (
	// EventComponent is the Events' source.component and
	// reportingComponent.
	EventComponent = "numa-partition"
	// EventTimeout bounds the request of one Event. A healthy API server
	// answers in milliseconds; one that does not answer in 2 s is not
	// waited for, the command has real work to do.
	EventTimeout = 2 * time.Second
	// EventBudget bounds the time all the Events of one EventRecorder
	// (one apply or remove) take together, failed ones included, so
	// that Events never delay a command by more than 5 s whatever the
	// number of Nodes; once it is spent, further Events are dropped
	// (and logged).
	EventBudget = 5 * time.Second
	// MaxEventMessage is the longest message the API server accepts
	// (NoteLengthLimit, in bytes): a longer one is cut, ending in "…".
	MaxEventMessage = 1024
	// maxReportingInstance is the API's limit on reportingInstance.
	maxReportingInstance = 128
)

// NodeEvent is the core/v1 Event that says, from host, reason and message
// about Node node: involvedObject a Node reference (uid the Node's name,
// which `kubectl describe node` matches besides the Node's own UID, as it
// does for kubelets that did not know it), type Normal or Warning,
// first and last timestamp now, count 1, source and reportingComponent
// numa-partition, reportingInstance host. The message is put on one line
// and cut to MaxEventMessage bytes. It is pure.
func NodeEvent(node, host, eventType, reason, message string, now time.Time) (*corev1.Event, error) {
	if err := checkNodeName(node); err != nil {
		return nil, err
	}
	if eventType != corev1.EventTypeNormal && eventType != corev1.EventTypeWarning {
		return nil, fmt.Errorf("event type %q: allowed are %s and %s", eventType, corev1.EventTypeNormal, corev1.EventTypeWarning)
	}
	if reason == "" || len(reason) > 128 {
		return nil, fmt.Errorf("event reason %q: 1 to 128 characters", reason)
	}
	t := metav1.NewTime(now)
	return &corev1.Event{
		TypeMeta:   metav1.TypeMeta{Kind: "Event", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: eventName(node, now), Namespace: metav1.NamespaceDefault},
		// As kubelet's own reference to its Node: no namespace, a Node
		// being cluster-wide (the Event then lives in default).
		InvolvedObject:      corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: node, UID: types.UID(node)},
		Reason:              reason,
		Message:             EventMessage(message),
		Type:                eventType,
		Source:              corev1.EventSource{Component: EventComponent, Host: host},
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
		ReportingController: EventComponent,
		ReportingInstance:   cut(host, maxReportingInstance),
	}, nil
}

// eventName is client-go's name of an Event on node at now
// (<node>.<unix nanoseconds in hex>); the node's name is shortened when
// the whole would not be a DNS subdomain (253 characters).
func eventName(node string, now time.Time) string {
	suffix := fmt.Sprintf(".%x", now.UnixNano())
	if len(node)+len(suffix) > validation.DNS1123SubdomainMaxLength {
		// A label may not end in '-' or '.': trimmed, the cut name is one.
		node = strings.TrimRight(node[:validation.DNS1123SubdomainMaxLength-len(suffix)], "-.")
	}
	return node + suffix
}

// EventMessage is message as an Event carries it: on one line (kubectl
// prints it in a table) and at most MaxEventMessage bytes, cut on a
// character with an ellipsis.
func EventMessage(message string) string {
	return cut(strings.Join(strings.FieldsFunc(message, func(r rune) bool { return r == '\n' || r == '\r' }), " "), MaxEventMessage)
}

// cut shortens s to at most n bytes, ending in "…", on a character
// boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) { // s[i] is the first byte left out
		i--
	}
	return s[:i] + "…"
}

// CreateEvent POSTs e into its namespace. A kubelet's credentials may
// create Events (the Node authorizer's rules), an identity like
// examples/drain-rbac.yaml's when its role allows it.
func (c *Client) CreateEvent(ctx context.Context, e *corev1.Event) error {
	if errs := validation.IsDNS1123Label(e.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", e.Namespace, errs[0])
	}
	cs, err := c.typed()
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{})
	return c.apiErr(err, http.MethodPost, nil, "api/v1/namespaces", e.Namespace, "events")
}

// EventPoster creates Events; *Client is one.
type EventPoster interface {
	CreateEvent(ctx context.Context, e *corev1.Event) error
}

// EventRecorder records the Events of one command on the Nodes it
// touches, best effort: a failure is logged at warning level, once per
// client (whose further Events are then dropped: an API server that
// refused or did not answer one would do the same with the next), and
// all of its Events together take at most Budget. The zero value works
// (with slog's default logger); a nil *EventRecorder records nothing (a
// dry run).
type EventRecorder struct {
	// Host is the Events' source.host and reportingInstance: the host
	// numa-partition runs on.
	Host string
	Log  *slog.Logger
	// Timeout bounds one Event's request (EventTimeout when 0); Budget
	// all of them (EventBudget when 0).
	Timeout, Budget time.Duration
	// Now is the Events' time (time.Now when nil).
	Now func() time.Time

	mu     sync.Mutex
	spent  time.Duration
	failed map[EventPoster]bool
	// dropped is true once the budget was found spent (it is logged once).
	dropped bool
}

// RecordNodeEvent records on Node node, with c, an Event of eventType
// (corev1.EventTypeNormal or EventTypeWarning), reason (CamelCase) and
// message; see NodeEvent. It returns once the API server answered, or
// after at most Timeout; it never fails its caller.
func (r *EventRecorder) RecordNodeEvent(ctx context.Context, c EventPoster, node, eventType, reason, message string) {
	if r == nil || c == nil || node == "" {
		return
	}
	log := r.Log
	if log == nil {
		log = slog.Default()
	}
	log = log.With("node", node, "reason", reason)
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	e, err := NodeEvent(node, r.Host, eventType, reason, message, now())
	if err != nil {
		log.Warn("not recording an Event on the Node", "err", err)
		return
	}
	timeout, ok := r.take(c, log)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t0 := time.Now()
	err = c.CreateEvent(ctx, e)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spent += time.Since(t0)
	if err == nil {
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer in %s: %w", timeout, err)
	}
	r.failed[c] = true
	log.Warn("could not record an Event on the Node (the command goes on; its further Events through this API server and identity are dropped)",
		"type", eventType, "message", e.Message, "err", err)
}

// take says how long the next Event through c may take: Timeout, or what
// is left of Budget when less; false when c failed before or the budget
// is spent.
func (r *EventRecorder) take(c EventPoster, log *slog.Logger) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed == nil {
		r.failed = map[EventPoster]bool{}
	}
	budget, timeout := r.Budget, r.Timeout
	if budget <= 0 {
		budget = EventBudget
	}
	if timeout <= 0 {
		timeout = EventTimeout
	}
	switch left := budget - r.spent; {
	case r.failed[c]:
		log.Debug("not recording an Event on the Node: an earlier one through the same API server and identity failed")
		return 0, false
	case left <= 0:
		if !r.dropped {
			r.dropped = true
			log.Warn(fmt.Sprintf("not recording Events any more: this command's Events took the %s allowed to them", budget))
		}
		return 0, false
	default:
		return min(timeout, left), true
	}
}
