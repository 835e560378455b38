package kubeapi

import "fmt"

// kindError is a sentinel error. It is a type, not errors.New, so that the
// Kubernetes kind can be spelled as Kubernetes spells it ("Node").
type kindError string

func (e kindError) Error() string { return string(e) }

// Sentinels for errors.Is on the errors of Client.Node.
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
)

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
