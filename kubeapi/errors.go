package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// apiErr turns an error of client-go's typed clients into this package's,
// naming the request (method, and the path below the server's URL) as
// they always did: an *APIError for an answer of the API server (client-go's
// StatusError), with notFound as a 404's sentinel besides ErrNotFound
// (ErrNotRegistered for a Node); ErrUnreachable when no answer came (the
// connection, TLS, the request's timeout); nil for nil.
func (c *Client) apiErr(err error, method string, notFound error, path ...string) error {
	if err == nil {
		return nil
	}
	u := c.cfg.Server.JoinPath(path...).String()
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return statusError(se.Status(), method, u, notFound)
	}
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %s %s: %w", ErrUnreachable, method, u, err)
	}
	return fmt.Errorf("%s %s: %w", method, u, err)
}

// statusError is the *APIError of an answer's metav1.Status: the API's
// own message, a PodDisruptionBudget's cause and Retry-After, and for 401,
// 403, 404, 409, 410 and 429 the sentinel to test it with.
func statusError(st metav1.Status, method, u string, notFound error) *APIError {
	code := int(st.Code)
	e := &APIError{Method: method, URL: u, Code: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Message: strings.TrimSpace(st.Message)}
	if st.Details != nil {
		e.Causes = st.Details.Causes
		e.RetryAfter = time.Duration(st.Details.RetryAfterSeconds) * time.Second
	}
	if len(e.Message) > 512 {
		e.Message = e.Message[:512] + "…"
	}
	e.kind = map[int]error{http.StatusNotFound: ErrNotFound, http.StatusUnauthorized: ErrUnauthorized,
		http.StatusForbidden: ErrForbidden, http.StatusConflict: ErrConflict,
		http.StatusTooManyRequests: ErrTooManyRequests, http.StatusGone: ErrGone}[code]
	if code == http.StatusNotFound && notFound != nil {
		e.kind = notFound
	}
	return e
}
