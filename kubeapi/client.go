package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
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
	// rest is cfg's rest.Config with NewClient's dialer and timeout: the
	// one http and stream are built from (RESTConfig).
	rest *rest.Config
	http *http.Client
	// stream is http without the overall timeout, for watches: their
	// answer lasts as long as the watch.
	stream *http.Client
	// tr is the connections' transport, below client-go's wrappers.
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
	c := &Client{cfg: cfg, timeout: o.Timeout, tr: &http.Transport{}}
	if cfg.rest == nil {
		c.err = errors.New("kubeapi: a Config from Load or Target.Config is needed")
		return c
	}
	c.rest = rest.CopyConfig(cfg.rest)
	c.rest.Timeout = o.Timeout
	c.rest.Dial = o.DialContext
	if c.rest.Dial == nil {
		c.rest.Dial = (&net.Dialer{Timeout: o.Timeout}).DialContext
	}
	if c.rest.Proxy == nil {
		// Only the kubeconfig's proxy-url: the environment's HTTPS_PROXY
		// is whoever started numa-partition's (a unit, a root shell), not
		// the cluster's, and status --root dials from another host's
		// network.
		c.rest.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	}
	tr, rt, err := transportFor(c.rest, o.Timeout)
	if err != nil {
		c.err = &KubeconfigError{File: cfg.File, Field: cfg.credField, Err: err}
		return c
	}
	c.tr, c.http, c.stream = tr, &http.Client{Transport: rt, Timeout: o.Timeout}, &http.Client{Transport: rt}
	return c
}

// transportFor is client-go's transport.New for rc without its
// process-wide cache of transports: the Client owns its connections
// (Close drops them) and bounds the TLS handshake and the wait for an
// answer's headers by timeout, which client-go's cached transports do
// not. The TLS settings, exec plugin, auth provider, proxy, token, basic
// auth and impersonation are all client-go's.
func transportFor(rc *rest.Config, timeout time.Duration) (*http.Transport, http.RoundTripper, error) {
	tc, err := rc.TransportConfig()
	if err != nil {
		return nil, nil, err
	}
	tlsc, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, nil, err
	}
	tr := &http.Transport{
		Proxy:               tc.Proxy,
		TLSClientConfig:     tlsc,
		TLSHandshakeTimeout: timeout,
		// An exec plugin's dialer wraps rc.Dial, to close the
		// connections when its client certificate changes.
		DialContext:         tc.DialHolder.Dial,
		MaxIdleConnsPerHost: 1,
		DisableCompression:  tc.DisableCompression,
		// A watch's answer is long, its headers are not.
		ResponseHeaderTimeout: timeout,
	}
	rt, err := transport.HTTPWrappersForConfig(tc, tr)
	return tr, rt, err
}

// RESTConfig returns a copy of the rest.Config the client sends with:
// the kubeconfig's, with the client's dialer, timeout and proxy, every
// file inline (so nothing built from it opens a file). Build client-go
// clientsets from it; for one that watches, set Timeout to 0 (its answer
// lasts as long as the watch, see Client.stream) and bound the requests
// by their context instead. Nil when the client cannot send.
func (c *Client) RESTConfig() *rest.Config {
	if c.rest == nil {
		return nil
	}
	return rest.CopyConfig(c.rest)
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
