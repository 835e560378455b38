package kubeapi

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kindError is a sentinel error. It is a type, not errors.New, so that the
// Kubernetes kind can be spelled as Kubernetes spells it ("Node").
type kindError string

func (e kindError) Error() string { return string(e) }

// Sentinels for errors.Is on the Client's errors (an *APIError, or for
// ErrUnreachable a transport error).
const (
	// ErrNotRegistered: the API server answered 404, it has no Node of
	// that name (the kubelet has not registered, or registered under
	// another name).
	ErrNotRegistered = kindError("Node not registered")
	// ErrUnauthorized: 401, the API server did not accept the credentials.
	ErrUnauthorized = kindError("unauthorized")
	// ErrForbidden: 403, the credentials are not allowed to read the Node
	// (a kubelet may read only its own Node).
	ErrForbidden = kindError("forbidden")
	// ErrUnreachable: no HTTP answer at all (connection, TLS, timeout).
	ErrUnreachable = kindError("API server unreachable")
	// ErrGone: 410, the resourceVersion a watch asked to start from is
	// older than the API server keeps (etcd compacted it): list again.
	ErrGone = kindError("resource version too old")
	// ErrNotFound: 404 for any object; a Node's 404 is also
	// ErrNotRegistered.
	ErrNotFound = kindError("not found")
	// ErrConflict: 409, a precondition failed (an eviction's pod UID: the
	// pod was replaced by another of the same name).
	ErrConflict = kindError("conflict")
	// ErrTooManyRequests: 429. For an eviction: a PodDisruptionBudget does
	// not allow it now (or its status is not computed yet); try again.
	ErrTooManyRequests = kindError("too many requests")
)

// APIError is an answer of the API server other than success, with the
// API's own message (from its metav1.Status, when the body is one).
type APIError struct {
	Method, URL string
	Code        int
	Status      string // "429 Too Many Requests"
	Message     string
	// Causes are the Status's details.causes: an eviction's 429 names the
	// PodDisruptionBudget there ("The disruption budget web needs 3
	// healthy pods and has 3 currently").
	Causes []metav1.StatusCause
	// RetryAfter is the Retry-After the server asked for; 0 when none.
	RetryAfter time.Duration
	kind       error // the sentinel errors.Is matches; nil for other codes
}

func (e *APIError) Error() string {
	detail := fmt.Sprintf("%s %s: %s", e.Method, e.URL, e.Status)
	if e.Message != "" {
		detail += ": " + e.Message
	}
	if e.kind == nil {
		return detail
	}
	return e.kind.Error() + ": " + detail
}

// Is matches the error's sentinel, and ErrNotFound for every 404.
func (e *APIError) Is(target error) bool {
	return target != nil && (target == e.kind || (e.Code == 404 && target == ErrNotFound))
}

// KubeconfigError is a kubeconfig that cannot be used: File is the
// kubeconfig, Field the key in it ("" for the file as a whole), in the
// form users["kubelet"].user.client-key.
type KubeconfigError struct {
	File  string
	Field string
	Err   error
}

func (e *KubeconfigError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("kubeconfig %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("kubeconfig %s: %s: %v", e.File, e.Field, e.Err)
}

func (e *KubeconfigError) Unwrap() error { return e.Err }
