package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultTimeout bounds one request when Options.Timeout is 0.
const DefaultTimeout = 5 * time.Second

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
	}
	if tr.DialContext == nil {
		tr.DialContext = (&net.Dialer{Timeout: o.Timeout}).DialContext
	}
	return &Client{cfg: cfg, timeout: o.Timeout, http: &http.Client{Transport: tr, Timeout: o.Timeout}}
}

// Close drops idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Node GETs /api/v1/nodes/<name>. Its errors: ErrNotRegistered (404),
// ErrUnauthorized (401), ErrForbidden (403) with the API's message,
// ErrUnreachable when no HTTP answer came; any other status is an error
// with the API's message.
func (c *Client) Node(ctx context.Context, name string) (*corev1.Node, error) {
	// Node names are DNS subdomains; anything else could change the path.
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("node name %q: %s", name, errs[0])
	}
	var n corev1.Node
	u, err := c.get(ctx, "Node", &n, "api/v1/nodes", name)
	if err != nil {
		return nil, err
	}
	if (n.Kind != "" && n.Kind != "Node") || n.Name != name {
		return nil, fmt.Errorf("GET %s: answered %s %q, not Node %q", u, orNone(n.Kind), n.Name, name)
	}
	return &n, nil
}

// Pod GETs /api/v1/namespaces/<namespace>/pods/<name>, with Node's
// errors (a kubelet's credentials may read the pods bound to its Node).
func (c *Client) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return nil, fmt.Errorf("namespace %q: %s", namespace, errs[0])
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("pod name %q: %s", name, errs[0])
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
	if c.cfg.Server == nil {
		return "", errors.New("kubeapi: a Config from Load or Target.Config is needed")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.cfg.Server.JoinPath(path...).String()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return u, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "numa-partition")
	if c.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return u, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return u, apiError(req, resp)
	}
	// Not strict: the API adds fields with every release, and an older
	// numa-partition must still read a newer server's objects.
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxObjectBytes+1))
	if err != nil {
		return u, fmt.Errorf("GET %s: reading the answer: %w", u, err)
	}
	if len(b) > maxObjectBytes {
		return u, fmt.Errorf("GET %s: answer larger than %d bytes", u, maxObjectBytes)
	}
	if err := json.Unmarshal(b, obj); err != nil {
		return u, fmt.Errorf("GET %s: not a %s: %w", u, kind, err)
	}
	return u, nil
}

// apiError turns a non-200 answer into an error carrying the API's own
// message (a metav1.Status, when the body is one) and, for 401, 403 and
// 404, the sentinel to test it with.
func apiError(req *http.Request, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(b))
	var st metav1.Status
	if json.Unmarshal(b, &st) == nil && st.Kind == "Status" && st.Message != "" {
		msg = st.Message
	}
	if len(msg) > 512 {
		msg = msg[:512] + "…"
	}
	detail := fmt.Sprintf("GET %s: %s", req.URL, resp.Status)
	if msg != "" {
		detail += ": " + msg
	}
	var kind error
	switch resp.StatusCode {
	case http.StatusNotFound:
		kind = ErrNotRegistered
	case http.StatusUnauthorized:
		kind = ErrUnauthorized
	case http.StatusForbidden:
		kind = ErrForbidden
	default:
		return errors.New(detail)
	}
	return fmt.Errorf("%w: %s", kind, detail)
}

func orNone(s string) string {
	if s == "" {
		return "an object without kind"
	}
	return s
}

// PodReader reads pods with the credentials of the kubeconfig at a path,
// loaded again at every read: a kubelet's kubeconfig appears only after
// its TLS bootstrap, and its client certificate rotates.
type PodReader struct {
	Kubeconfig string
	Options    Options
}

// Pod is Client.Pod with the kubeconfig as it is now.
func (r PodReader) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	cfg, err := Load("/", r.Kubeconfig)
	if err != nil {
		return nil, err
	}
	c := NewClient(cfg, r.Options)
	defer c.Close()
	return c.Pod(ctx, namespace, name)
}
