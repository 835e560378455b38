package kubeapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DefaultTimeout bounds one request when Options.Timeout is 0: half the
// API server's own limit on a request (60 s), so that a loaded control
// plane answering an eviction in seconds is waited for. 5 s was too short:
// in the e2e, with etcd answering reads in over a second, an eviction
// took longer and `apply --drain` gave up on an API server it called
// unreachable. kubectl waits with no limit by default.
const DefaultTimeout = 30 * time.Second

// maxObjectBytes caps an object's JSON. kubelet reports at most 50 images
// (nodeStatusMaxImages), so real Nodes are far below this, and a Pod is
// at most etcd's 1.5 MiB request; the cap only protects the reader from
// a server that streams forever.
const maxObjectBytes = 8 << 20

// Options tune a Client.
type Options struct {
	// Timeout bounds each request, connection and TLS handshake included.
	Timeout time.Duration
	// DialContext, when set, opens the TCP connections (status --root
	// dials from the network namespace of that root's PID 1).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Client reads from one API server with one kubeconfig's credentials.
type Client struct {
	cfg     *Config
	timeout time.Duration
	http    *http.Client
	// stream is http without the overall timeout, for watches: their
	// answer lasts as long as the watch.
	stream *http.Client
	// tr is the connections' transport, below an exec plugin's wrapper.
	tr *http.Transport
	// err is why the client cannot send (an exec plugin client-go
	// refused): every request returns it.
	err error

	// The typed clientsets (clientset.go), built on first use: cs for
	// ordinary requests, ws for watches.
	csOnce, wsOnce sync.Once
	cs, ws         *kubernetes.Clientset
	csErr, wsErr   error
}

// NewClient returns a client for cfg. Close it to drop its connections.
func NewClient(cfg *Config, o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	tr := &http.Transport{
		// No Proxy: see the proxy-url comment in kubeconfig.go.
		TLSClientConfig:     cfg.tls.Clone(),
		TLSHandshakeTimeout: o.Timeout,
		DialContext:         o.DialContext,
		MaxIdleConnsPerHost: 1,
		// A watch's answer is long, its headers are not.
		ResponseHeaderTimeout: o.Timeout,
	}
	if tr.DialContext == nil {
		tr.DialContext = (&net.Dialer{Timeout: o.Timeout}).DialContext
	}
	var rt http.RoundTripper = tr
	var err error
	switch {
	case cfg.exec != nil:
		rt, err = execTransport(cfg, tr)
	case cfg.authProvider != nil:
		rt, err = authProviderTransport(cfg, tr)
	}
	return &Client{cfg: cfg, timeout: o.Timeout, http: &http.Client{Transport: rt, Timeout: o.Timeout}, stream: &http.Client{Transport: rt}, tr: tr, err: err}
}

// Close drops idle connections.
func (c *Client) Close() { c.tr.CloseIdleConnections() }

// Node GETs /api/v1/nodes/<name>. Its errors: ErrNotRegistered (404),
// ErrUnauthorized (401), ErrForbidden (403) with the API's message,
// ErrUnreachable when no HTTP answer came; any other status is an error
// with the API's message.
func (c *Client) Node(ctx context.Context, name string) (*corev1.Node, error) {
	// Node names are DNS subdomains; anything else could change the path.
	if err := checkNodeName(name); err != nil {
		return nil, err
	}
	cs, err := c.typed()
	if err != nil {
		return nil, err
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, c.apiErr(err, http.MethodGet, ErrNotRegistered, "api/v1/nodes", name)
	}
	if n.Name != name {
		return nil, fmt.Errorf("GET /api/v1/nodes/%s: answered Node %q", name, n.Name)
	}
	return n, nil
}

// Pod GETs /api/v1/namespaces/<namespace>/pods/<name>, with Node's
// errors but ErrNotFound for a 404 (a kubelet's credentials may read the
// pods bound to its Node).
func (c *Client) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if err := checkPodName(namespace, name); err != nil {
		return nil, err
	}
	cs, err := c.typed()
	if err != nil {
		return nil, err
	}
	p, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, c.apiErr(err, http.MethodGet, nil, "api/v1/namespaces", namespace, "pods", name)
	}
	if p.Name != name || p.Namespace != namespace {
		return nil, fmt.Errorf("GET /api/v1/namespaces/%s/pods/%s: answered Pod %s/%s", namespace, name, p.Namespace, p.Name)
	}
	return p, nil
}
