package kubeapi

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// clientsetFor is client-go's typed clientset for c's API server, sending
// through hc (c.http, whose transport carries the TLS settings and
// credentials client-go built from the kubeconfig, or c.stream for
// watches), on c's rest.Config (NewClient).
//
// JSON both ways: the fake API server of the tests speaks nothing else,
// and objects this small gain little from protobuf. No client-side rate
// limit (QPS -1): the requests were never throttled, a drain's evictions
// come one by one, and the API server's priority and fairness is the
// limit that matters.
func (c *Client) clientsetFor(hc *http.Client) (*kubernetes.Clientset, error) {
	// NewClient set err whenever it has no rest.Config to give.
	if c.err != nil {
		return nil, c.err
	}
	rc := rest.CopyConfig(c.rest)
	rc.UserAgent = "numa-partition"
	rc.ContentConfig = rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}
	rc.QPS = -1
	rc.Timeout = hc.Timeout
	bounded := &http.Client{Transport: bound(hc.Transport), Timeout: hc.Timeout}
	cs, err := kubernetes.NewForConfigAndClient(rc, bounded)
	if err != nil {
		return nil, fmt.Errorf("kubeapi: building the clientset of %s: %w", rc.Host, err)
	}
	return cs, nil
}

// typed is the clientset of ordinary requests (each bounded by
// Options.Timeout), built once.
func (c *Client) typed() (*kubernetes.Clientset, error) {
	c.csOnce.Do(func() { c.cs, c.csErr = c.clientsetFor(c.http) })
	return c.cs, c.csErr
}

// watching is the clientset of watches, whose answer lasts as long as the
// watch: without the overall timeout (the caller bounds the watch).
func (c *Client) watching() (*kubernetes.Clientset, error) {
	c.wsOnce.Do(func() { c.ws, c.wsErr = c.clientsetFor(c.stream) })
	return c.ws, c.wsErr
}

// boundTransport is what every request goes through above client-go's
// transport (credentials, TLS): a cap on answers, and evictions' 429s
// left to the drain.
type boundTransport struct {
	next http.RoundTripper
}

func bound(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &boundTransport{next: next}
}

func (t *boundTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	watching := req.URL.Query().Get("watch") == "true"
	resp, err := t.next.RoundTrip(req)
	if err != nil && watching {
		// client-go answers a watch request that timed out or whose
		// connection broke with a watch that ends at once, no error:
		// the pod cache would take a stalled API server for a quiet
		// one. Not a net.Error any more, it is an error.
		return nil, &watchRequestError{err}
	}
	if err != nil {
		return nil, err
	}
	// client-go retries, within the request's timeout, a 429 that has a
	// Retry-After header, up to 10 times. A PodDisruptionBudget's 429
	// to an eviction has one (10 s): the drain would see a timeout
	// instead of the budget that holds the pod back. The drain retries
	// by itself, in rounds, honouring the same delay from the Status's
	// details, which stay.
	if resp.StatusCode == http.StatusTooManyRequests && req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/eviction") {
		resp.Header.Del("Retry-After")
	}
	// A watch's answer is a stream of events, each bounded by client-go's
	// decoder (16 MiB); any other answer is one object or a page of them.
	if !watching {
		resp.Body = &limitedBody{r: io.LimitReader(resp.Body, maxObjectBytes+1), c: resp.Body, url: req.URL.String()}
	}
	return resp, nil
}

// limitedBody fails the read of an answer larger than maxObjectBytes:
// a server that streams for ever does not fill the memory.
type limitedBody struct {
	r   io.Reader
	c   io.Closer
	n   int64
	url string
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > maxObjectBytes {
		return n, fmt.Errorf("%s: answer larger than %d bytes", b.url, maxObjectBytes)
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.c.Close() }

// watchRequestError is a watch request that got no answer; it hides the
// net.Error below from client-go (see RoundTrip).
type watchRequestError struct{ err error }

func (e *watchRequestError) Error() string { return e.err.Error() }
