package daemonapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Client talks to one partition's daemon over its Unix socket. The zero
// value with Socket set works (a connection per call);
// NewClient keeps connections alive for callers that make many calls.
type Client struct {
	Socket string
	// HTTP, when set, is used instead of a one-off client.
	HTTP *http.Client
}

// NewClient returns a Client that reuses its connections.
func NewClient(socket string) Client {
	return Client{Socket: socket, HTTP: &http.Client{Transport: unixTransport(socket, false)}}
}

func unixTransport(socket string, oneOff bool) *http.Transport {
	var d net.Dialer
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", socket)
		},
		DisableKeepAlives:   oneOff,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
}

// APIError is a non-2xx answer from the daemon.
type APIError struct {
	Status int
	ErrorResponse
}

func (e *APIError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (HTTP %d)", e.Field, e.ErrorResponse.Error, e.Status)
	}
	return fmt.Sprintf("%s (HTTP %d)", e.ErrorResponse.Error, e.Status)
}

// Admit sends a Pod or VirtualMachineInstance manifest (YAML or JSON).
func (c Client) Admit(ctx context.Context, manifest []byte) (AdmitResponse, error) {
	var out AdmitResponse
	return out, c.do(ctx, http.MethodPost, PathAdmit, manifest, &out)
}

// Release frees the allocation of a pod UID. An unknown UID is an
// *APIError with Status 404.
func (c Client) Release(ctx context.Context, uid string) (ReleaseResponse, error) {
	var out ReleaseResponse
	return out, c.do(ctx, http.MethodPost, PathRelease+url.PathEscape(uid), nil, &out)
}

// Allocations lists the admitted pods.
func (c Client) Allocations(ctx context.Context) (AllocationsResponse, error) {
	var out AllocationsResponse
	return out, c.do(ctx, http.MethodGet, PathAllocations, nil, &out)
}

// State returns the Memory Manager tables: free, reserved and allocatable
// bytes per NUMA node and resource.
func (c Client) State(ctx context.Context) (StateResponse, error) {
	var out StateResponse
	return out, c.do(ctx, http.MethodGet, PathState, nil, &out)
}

// Health reports whether the daemon serves. A daemon that is up but broken
// answers 503 with the HealthResponse; that is returned together with an
// *APIError.
func (c Client) Health(ctx context.Context) (HealthResponse, error) {
	var out HealthResponse
	return out, c.do(ctx, http.MethodGet, PathHealth, nil, &out)
}

func (c Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Transport: unixTransport(c.Socket, true)}
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	// The host part is ignored by the Unix dialer.
	req, err := http.NewRequestWithContext(ctx, method, "http://allocator"+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/yaml")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("allocator daemon at %s: %w", c.Socket, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("allocator daemon at %s: reading response: %w", c.Socket, err)
	}
	if resp.StatusCode/100 != 2 {
		apiErr := &APIError{Status: resp.StatusCode}
		if json.Unmarshal(data, &apiErr.ErrorResponse) != nil || apiErr.ErrorResponse.Error == "" {
			apiErr.ErrorResponse.Error = http.StatusText(resp.StatusCode)
		}
		// A 503 health answer still carries the health body.
		_ = json.Unmarshal(data, out)
		return apiErr
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("allocator daemon at %s: decoding %s response: %w", c.Socket, path, err)
	}
	return nil
}
