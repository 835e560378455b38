package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

// rawRequest sends a request over the daemon's socket without the Client's
// conveniences, for requests the Client would never make.
func rawRequest(t *testing.T, socket, method, path string, body io.Reader, contentLength int64) (int, daemonapi.ErrorResponse, []byte) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
	req, err := http.NewRequest(method, "http://allocator"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentLength != 0 {
		req.ContentLength = contentLength
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e daemonapi.ErrorResponse
	_ = json.Unmarshal(data, &e)
	return resp.StatusCode, e, data
}

func TestRequestErrors(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, daemonSpec{dir: dir, config: writeConfig(t, dir, testConfig()), extra: []string{"--max-request-bytes", "65536"}})
	good := podSpec{uid: "good-1", memory: []uint64{gib}}.yaml(t)

	t.Run("oversized with Content-Length", func(t *testing.T) {
		status, e, _ := rawRequest(t, d.socket, "POST", daemonapi.PathAdmit, bytes.NewReader(make([]byte, 65537)), 0)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(e.Error, "65536") {
			t.Fatalf("got %d %+v", status, e)
		}
	})
	t.Run("oversized chunked", func(t *testing.T) {
		// No Content-Length: the limit must hold while reading.
		body := io.MultiReader(bytes.NewReader(good), strings.NewReader("#"+strings.Repeat("x", 70000)+"\n"))
		status, e, _ := rawRequest(t, d.socket, "POST", daemonapi.PathAdmit, body, -1)
		if status != http.StatusRequestEntityTooLarge {
			t.Fatalf("got %d %+v", status, e)
		}
	})
	t.Run("malformed quantity names the field", func(t *testing.T) {
		bad := bytes.Replace(good, []byte("memory: 1Gi"), []byte("memory: 1GB!"), 1)
		_, err := d.Client.Admit(context.Background(), bad)
		var apiErr *daemonapi.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Field != "spec.containers[0].resources.limits.memory" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("unknown field", func(t *testing.T) {
		bad := bytes.Replace(good, []byte("containers:"), []byte("contianers:"), 1)
		_, err := d.Client.Admit(context.Background(), bad)
		var apiErr *daemonapi.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Field != "spec.contianers" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("not a manifest", func(t *testing.T) {
		status, e, _ := rawRequest(t, d.socket, "POST", daemonapi.PathAdmit, strings.NewReader("{{{"), 0)
		if status != 400 || !strings.Contains(e.Error, "not valid YAML or JSON") {
			t.Fatalf("got %d %+v", status, e)
		}
	})
	t.Run("wrong method", func(t *testing.T) {
		status, e, _ := rawRequest(t, d.socket, "GET", daemonapi.PathAdmit, nil, 0)
		if status != http.StatusMethodNotAllowed || !strings.Contains(e.Error, "use POST") {
			t.Fatalf("got %d %+v", status, e)
		}
	})
	t.Run("unknown endpoint", func(t *testing.T) {
		status, e, _ := rawRequest(t, d.socket, "GET", "/v2/admit", nil, 0)
		if status != 404 || !strings.Contains(e.Error, "/v1/admit") {
			t.Fatalf("got %d %+v", status, e)
		}
	})
	t.Run("release unknown UID", func(t *testing.T) {
		_, err := d.Client.Release(context.Background(), "no-such-pod")
		var apiErr *daemonapi.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Field != "uid" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("retry is idempotent, a different manifest with the same UID conflicts", func(t *testing.T) {
		first, err := d.Client.Admit(context.Background(), good)
		if err != nil || !first.Decision.Admitted || first.Repeated {
			t.Fatalf("first admission: %+v %v", first, err)
		}
		again, err := d.Client.Admit(context.Background(), good)
		if err != nil || !again.Repeated || again.Generation != first.Generation || !jsonEqual(again.Decision, first.Decision) {
			t.Fatalf("retry: %+v %v", again, err)
		}
		other := podSpec{uid: "good-1", memory: []uint64{2 * gib}}.yaml(t)
		_, err = d.Client.Admit(context.Background(), other)
		var apiErr *daemonapi.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || apiErr.Field != "metadata.uid" {
			t.Fatalf("got %v", err)
		}
		st, err := d.Client.Allocations(context.Background())
		if err != nil || len(st.Allocations) != 1 || st.Generation != first.Generation {
			t.Fatalf("after retry and conflict: %+v %v", st, err)
		}
	})
	// The daemon is still healthy after all that.
	h, err := d.Client.Health(context.Background())
	if err != nil || h.Status != "ok" || h.Partition != "test" {
		t.Fatalf("health %+v %v", h, err)
	}
}

// TestNotifyStatusAndWatchdog checks the systemd protocol the unit relies
// on: READY=1 (startDaemon waits for it), STATUS= after a change, and
// WATCHDOG=1 pings when WATCHDOG_USEC is set.
func TestNotifyStatusAndWatchdog(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, daemonSpec{dir: dir, config: writeConfig(t, dir, testConfig()), env: []string{"WATCHDOG_USEC=300000"}})
	if _, err := d.Client.Admit(context.Background(), podSpec{uid: "n1", memory: []uint64{gib}}.yaml(t)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for !(seen["status"] && seen["watchdog"]) {
		select {
		case msg := <-d.notify:
			if strings.HasPrefix(msg, "STATUS=serving 1 allocations") {
				seen["status"] = true
			}
			if msg == "WATCHDOG=1" {
				seen["watchdog"] = true
			}
		case <-deadline:
			t.Fatalf("saw %v of STATUS after admission and WATCHDOG=1\n%s", seen, d.stderr.String())
		}
	}
	d.stop()
	for {
		select {
		case msg := <-d.notify:
			if msg == "STOPPING=1" {
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no STOPPING=1 on SIGTERM")
		}
	}
}
