package kubeapi_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
)

// rawServer is a client of an API server that answers every request with
// answer, to test what kubeapitest's well-behaved fake never sends.
func rawServer(t *testing.T, answer http.HandlerFunc) *kubeapi.Client {
	t.Helper()
	srv := httptest.NewTLSServer(answer)
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	kc, err := json.Marshal(map[string]any{
		"clusters":        []any{map[string]any{"name": "c", "cluster": map[string]any{"server": srv.URL, "certificate-authority-data": ca}}},
		"users":           []any{map[string]any{"name": "u", "user": map[string]any{"token": "t"}}},
		"contexts":        []any{map[string]any{"name": "x", "context": map[string]any{"cluster": "c", "user": "u"}}},
		"current-context": "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := write(t, t.TempDir(), map[string][]byte{"kc": kc})
	cfg, err := kubeapi.Load("/", filepath.Join(dir, "kc"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: 5 * time.Second})
	t.Cleanup(c.Close)
	return c
}

// An answer larger than any object fails the request instead of filling
// the memory.
func TestAnswerBounded(t *testing.T) {
	c := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Node","apiVersion":"v1","metadata":{"name":"host-node0","labels":{"x":"`))
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range 16 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	_, err := c.Node(context.Background(), "host-node0")
	if err == nil || !strings.Contains(err.Error(), "answer larger than") {
		t.Fatalf("a 16 MiB answer: %v", err)
	}
}

// A PodDisruptionBudget's 429 to an eviction comes back at once, with its
// Retry-After, for the drain to retry in its rounds: client-go would
// otherwise retry it by itself, hidden, until the request times out.
func TestEvictionTooManyRequestsNotRetriedByClientGo(t *testing.T) {
	calls := 0
	c := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "10")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests, Message: "Cannot evict pod as it would violate the pod's disruption budget.",
			Details: &metav1.StatusDetails{RetryAfterSeconds: 10, Causes: []metav1.StatusCause{{Type: "DisruptionBudget", Message: "The disruption budget web needs 3 healthy pods and has 3 currently"}}}})
	})
	t0 := time.Now()
	err := c.Evict(context.Background(), "default", "web-0", "u1")
	var ae *kubeapi.APIError
	if !errors.Is(err, kubeapi.ErrTooManyRequests) || !errors.As(err, &ae) || ae.RetryAfter != 10*time.Second || len(ae.Causes) != 1 {
		t.Fatalf("eviction held back by a budget: %v", err)
	}
	if calls != 1 || time.Since(t0) > 2*time.Second {
		t.Errorf("%d requests in %s, want 1 at once", calls, time.Since(t0))
	}
	for _, want := range []string{"too many requests: POST ", "/api/v1/namespaces/default/pods/web-0/eviction: 429 Too Many Requests: Cannot evict pod"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
