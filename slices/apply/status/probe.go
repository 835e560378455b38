package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
	"github.com/numa-partition/numa-partition/slices/apply/host"
)

// probe GETs a kubelet healthz endpoint: 200 with body "ok" is healthy.
func probe(ctx context.Context, c *http.Client, url string) Probe {
	p := Probe{Endpoint: url}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		p.Detail = err.Error()
		return p
	}
	resp, err := c.Do(req)
	if err != nil {
		p.Detail = "unreachable: " + err.Error()
		return p
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	text := strings.TrimSpace(string(body))
	p.OK = resp.StatusCode == http.StatusOK && text == "ok"
	p.Detail = fmt.Sprintf("HTTP %d %q", resp.StatusCode, text)
	return p
}

// probeUnix asks the allocator's /v1/healthz over its Unix socket, with
// the daemon's own client.
func probeUnix(ctx context.Context, root, socket string, timeout time.Duration) Probe {
	p := Probe{Endpoint: "unix:" + socket}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sock, done, err := host.Root(root).SocketPath(socket)
	if err != nil {
		p.Detail = err.Error()
		return p
	}
	defer done()
	h, err := daemonapi.Client{Socket: sock}.Health(ctx)
	var apiErr *daemonapi.APIError
	switch {
	case errors.As(err, &apiErr):
		p.Detail = fmt.Sprintf("HTTP %d status %q: %s", apiErr.Status, h.Status, apiErr.ErrorResponse.Error)
	case err != nil:
		p.Detail = "unreachable: " + err.Error()
	default:
		p.OK = h.Status == "ok"
		p.Detail = fmt.Sprintf("HTTP 200 status %q", h.Status)
	}
	return p
}
