package kubeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	var n corev1.Node
	u, err := c.do(ctx, request{method: http.MethodGet, kind: "Node", path: []string{"api/v1/nodes", name}, notFound: ErrNotRegistered}, &n)
	if err != nil {
		return nil, err
	}
	if (n.Kind != "" && n.Kind != "Node") || n.Name != name {
		return nil, fmt.Errorf("GET %s: answered %s %q, not Node %q", u, orNone(n.Kind), n.Name, name)
	}
	return &n, nil
}

// Pod GETs /api/v1/namespaces/<namespace>/pods/<name>, with Node's
// errors but ErrNotFound for a 404 (a kubelet's credentials may read the
// pods bound to its Node).
func (c *Client) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if err := checkPodName(namespace, name); err != nil {
		return nil, err
	}
	var p corev1.Pod
	u, err := c.get(ctx, "Pod", &p, "api/v1/namespaces", namespace, "pods", name)
	if err != nil {
		return nil, err
	}
	if (p.Kind != "" && p.Kind != "Pod") || p.Name != name || p.Namespace != namespace {
		return nil, fmt.Errorf("GET %s: answered %s %s/%s, not Pod %s/%s", u, orNone(p.Kind), p.Namespace, p.Name, namespace, name)
	}
	return &p, nil
}

// get GETs the object (of kind) at the API path into obj and returns its
// URL.
func (c *Client) get(ctx context.Context, kind string, obj any, path ...string) (string, error) {
	return c.do(ctx, request{method: http.MethodGet, kind: kind, path: path}, obj)
}

// request is one call of the API.
type request struct {
	method string
	kind   string   // what the answer is, for errors ("Node", "PodList")
	path   []string // below the server's URL, each element escaped
	query  url.Values
	body   []byte // JSON; nil for none
	// contentType is the body's; "" is application/json.
	contentType string
	// notFound is the sentinel of a 404 besides ErrNotFound
	// (ErrNotRegistered for a Node).
	notFound error
}

// do sends r and decodes a 2xx answer into out (nil: the answer is read
// and dropped); it returns the request's URL. Errors: *APIError for any
// other answer, ErrUnreachable when none came.
func (c *Client) do(ctx context.Context, r request, out any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	us, resp, err := c.send(ctx, c.http, r)
	if err != nil {
		return us, err
	}
	defer resp.Body.Close()
	// Not strict: the API adds fields with every release, and an older
	// numa-partition must still read a newer server's objects.
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxObjectBytes+1))
	if err != nil {
		return us, fmt.Errorf("%s %s: reading the answer: %w", r.method, us, err)
	}
	if len(b) > maxObjectBytes {
		return us, fmt.Errorf("%s %s: answer larger than %d bytes", r.method, us, maxObjectBytes)
	}
	if out == nil {
		return us, nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return us, fmt.Errorf("%s %s: not a %s: %w", r.method, us, r.kind, err)
	}
	return us, nil
}

// send sends r through hc (c.http, or c.stream for a watch, whose answer
// lasts as long as ctx lets it) with the headers and credentials every
// request has, and returns the URL and the answer, which is a 2xx: any
// other is an *APIError (its body read and closed), no answer
// ErrUnreachable. The caller closes the answer's body.
func (c *Client) send(ctx context.Context, hc *http.Client, r request) (string, *http.Response, error) {
	if c.err != nil {
		return "", nil, c.err
	}
	u := c.cfg.Server.JoinPath(r.path...)
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	us := u.String()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, us, body)
	if err != nil {
		return us, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "numa-partition")
	if r.body != nil {
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return us, nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return us, nil, apiError(req, resp, r.notFound)
	}
	return us, resp, nil
}

// apiError turns an answer other than 2xx into an *APIError carrying the
// API's own message (a metav1.Status, when the body is one) and, for 401,
// 403, 404, 409, 410 and 429, the sentinel to test it with (notFound too
// for a 404, when set).
func apiError(req *http.Request, resp *http.Response, notFound error) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &APIError{Method: req.Method, URL: req.URL.String(), Code: resp.StatusCode, Status: resp.Status,
		Message: strings.TrimSpace(string(b))}
	var st metav1.Status
	if json.Unmarshal(b, &st) == nil && st.Kind == "Status" {
		if st.Message != "" {
			e.Message = st.Message
		}
		if st.Details != nil {
			e.Causes = st.Details.Causes
			e.RetryAfter = time.Duration(st.Details.RetryAfterSeconds) * time.Second
		}
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	if len(e.Message) > 512 {
		e.Message = e.Message[:512] + "…"
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		e.kind = ErrNotFound
		if notFound != nil {
			e.kind = notFound
		}
	case http.StatusUnauthorized:
		e.kind = ErrUnauthorized
	case http.StatusForbidden:
		e.kind = ErrForbidden
	case http.StatusConflict:
		e.kind = ErrConflict
	case http.StatusTooManyRequests:
		e.kind = ErrTooManyRequests
	case http.StatusGone:
		e.kind = ErrGone
	}
	return e
}

func orNone(s string) string {
	if s == "" {
		return "an object without kind"
	}
	return s
}
