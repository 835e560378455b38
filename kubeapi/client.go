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

// maxNodeBytes caps a Node's JSON. kubelet reports at most 50 images
// (nodeStatusMaxImages), so real Nodes are far below this; the cap only
// protects status from a server that streams forever.
const maxNodeBytes = 8 << 20

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
	if c.cfg.Server == nil {
		return nil, errors.New("kubeapi: a Config from Load or Target.Config is needed")
	}
	// Node names are DNS subdomains; anything else could change the path.
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("node name %q: %s", name, errs[0])
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.cfg.Server.JoinPath("api/v1/nodes", name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "numa-partition-status")
	if c.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, apiError(req, resp)
	}
	var n corev1.Node
	// Not strict: the API adds fields to Node with every release, and an
	// older numa-partition must still read a newer server's Nodes.
	body := io.LimitReader(resp.Body, maxNodeBytes+1)
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: reading the answer: %w", u, err)
	}
	if len(b) > maxNodeBytes {
		return nil, fmt.Errorf("GET %s: answer larger than %d bytes", u, maxNodeBytes)
	}
	if err := json.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("GET %s: not a Node: %w", u, err)
	}
	if (n.Kind != "" && n.Kind != "Node") || n.Name != name {
		return nil, fmt.Errorf("GET %s: answered %s %q, not Node %q", u, orNone(n.Kind), n.Name, name)
	}
	return &n, nil
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
