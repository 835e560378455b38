package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

func limitsConfig() allocator.Config {
	return allocator.Config{Policy: "best-effort", Nodes: []allocator.NodeResources{{ID: 0, Memory: 16 << 30,
		Hugepages: map[uint64]uint64{}, Reserved: map[allocator.ResourceName]uint64{allocator.ResourceMemory: 1 << 30}}}}
}

func podYAML(uid string, containers int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, uid: %q}\nspec:\n  containers:\n", uid)
	for i := 0; i < containers; i++ {
		fmt.Fprintf(&b, "  - {name: c%d, image: x, resources: {limits: {cpu: \"1\", memory: 1Mi}}}\n", i)
	}
	return b.String()
}

func TestManifestLimits(t *testing.T) {
	for _, c := range []struct{ name, manifest, field, want string }{
		{"a key given twice", "apiVersion: v1\nkind: Pod\nmetadata: {name: a, name: b, uid: u1}\nspec: {containers: []}\n", "", `"name" already set in map`},
		{"a path as a UID", podYAML("../../etc/passwd", 1), "metadata.uid", `"../../etc/passwd" is not a pod UID`},
		{"a newline in a UID", podYAML("a\nb", 1), "metadata.uid", "is not a pod UID"},
		{"a long UID", podYAML(strings.Repeat("a", 129), 1), "metadata.uid", "is 129 characters long; a pod UID has at most 128"},
		{"too many containers", podYAML("big", MaxContainersPerPod+1), "spec.containers", "the pod has 1025 containers and init containers; the allocator admits at most 1024"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeManifest([]byte(c.manifest))
			require.Error(t, err)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, c.field, fe.Field)
			assert.Contains(t, fe.Msg, c.want)
		})
	}
	_, err := DecodeManifest([]byte(podYAML("3c9e9a5e-7f0a-4c1b-9d2e-1a2b3c4d5e6f", MaxContainersPerPod)))
	assert.NoError(t, err, "a UUID and the most containers allowed")
}

// hostileManifests are pods the API server never lets through, as the
// daemon's API receives them (FuzzDecodeManifest seeds them too).
var hostileManifests = []struct{ name, manifest, field, want string }{
	{"negative cpu", hostilePod(`limits: {cpu: "-2", memory: 1Gi}`), "spec.containers[0].resources.limits.cpu", "-2 is negative"},
	{"negative hugepages", hostilePod(`limits: {cpu: "1", memory: 1Gi, hugepages-2Mi: -2Mi}`), "spec.containers[0].resources.limits.hugepages-2Mi", "-2Mi is negative"},
	{"negative overhead", strings.Replace(hostilePod(`limits: {cpu: "1", memory: 1Gi}`), "  initContainers: []\n", "  overhead: {memory: -1Gi}\n", 1), "spec.overhead.memory", "-1Gi is negative"},
	{"absurd memory", hostilePod(`limits: {cpu: "1", memory: 4Ei}`), "spec.containers[0].resources.limits.memory", "at most 4503599627370496"},
	{"absurd cpu", hostilePod(`limits: {cpu: "1e15", memory: 1Gi}`), "spec.containers[0].resources.limits.cpu", "1e15 CPUs: at most 65536"},
	{"empty name", strings.Replace(hostilePod(`limits: {cpu: "1", memory: 1Gi}`), "name: c,", `name: "",`, 1), "spec.containers[0].name", "empty"},
	{"duplicate name", strings.Replace(hostilePod(`limits: {cpu: "1", memory: 1Gi}`), "  initContainers: []\n", "  initContainers: [{name: c, image: x}]\n", 1), "spec.containers[0].name", `"c": the pod has two containers of that name`},
}

// hostilePod is a one-container pod with resources res.
func hostilePod(res string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, uid: u1}\nspec:\n  initContainers: []\n  containers: [{name: c, image: x, resources: {" + res + "}}]\n"
}

// Repro (#24): the daemon's API admitted a negative CPU limit (unpinned),
// a negative overhead, 4Ei of memory and 10^15 CPUs; DecodeManifest now
// answers them with the allocator's one gate (allocator.CheckPod),
// naming the field.
func TestManifestHostileQuantities(t *testing.T) {
	for _, c := range hostileManifests {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeManifest([]byte(c.manifest))
			require.Error(t, err)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, c.field, fe.Field)
			assert.Contains(t, fe.Msg, c.want)
		})
	}
}

func newLimitsServer(t *testing.T, dir string) (*Server, error) {
	return testServer(t, ServerOptions{Partition: "p", Config: limitsConfig(), StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// Health, allocations and state are read without the decision mutex: they
// answer while an admission holds it.
func TestHealthWhileDeciding(t *testing.T) {
	srv, err := newLimitsServer(t, t.TempDir())
	require.NoError(t, err)
	srv.mu.Lock() // an admission in progress
	defer srv.mu.Unlock()
	for _, h := range []http.HandlerFunc{srv.handleHealth, srv.handleAllocations, srv.handleState} {
		done := make(chan int, 1)
		go func() {
			rec := httptest.NewRecorder()
			h(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			done <- rec.Code
		}()
		select {
		case code := <-done:
			assert.Equal(t, http.StatusOK, code)
		case <-time.After(5 * time.Second):
			t.Fatal("a read waited for the decision mutex")
		}
	}
}

// A checkpoint whose checksum is right but whose content does not add up
// is refused at start, with the recovery hint.
func TestCheckpointThatDoesNotAddUp(t *testing.T) {
	dir := t.TempDir()
	srv, err := newLimitsServer(t, dir)
	require.NoError(t, err)
	m, err := DecodeManifest([]byte(podYAML("u1", 1)))
	require.NoError(t, err)
	_, _, err = srv.admit(m)
	require.NoError(t, err)
	cp, err := ReadCheckpoint(dir)
	require.NoError(t, err)
	for uid := range cp.State.Blocks {
		cp.State.Blocks[uid]["c0"][0].Size = 64 << 30 // larger than the node
	}
	require.NoError(t, WriteCheckpoint(dir, cp)) // a fresh, valid checksum
	_, err = newLimitsServer(t, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a block of 68719476736 bytes of memory on nodes [0], more than their 16106127360 allocatable")
	assert.Contains(t, err.Error(), "reset-state")
}

// The API refuses a malformed UID in a release, before anything else.
func TestReleaseRefusesABadUID(t *testing.T) {
	srv, err := newLimitsServer(t, t.TempDir())
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/v1/release/a..b%0Ac", nil)
	req.SetPathValue("uid", "a..b\nc")
	rec := httptest.NewRecorder()
	srv.handleRelease(rec, req.WithContext(context.Background()))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "is not a pod UID")
}

// The request timeout holds while a decision does not finish: the client
// gets a 503 that says the admission may have been decided.
func TestRequestTimeout(t *testing.T) {
	dir := t.TempDir()
	srv, err := testServer(t, ServerOptions{Partition: "p", Config: limitsConfig(), StateDir: dir,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RequestTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	srv.mu.Lock() // a decision that does not end
	// The timed-out admission goes on once the lock is free: let it reach
	// its checkpoint before the state dir is removed.
	defer func() {
		srv.mu.Unlock()
		require.Eventually(t, func() bool {
			cp, err := ReadCheckpoint(dir)
			return err == nil && cp != nil && cp.Generation == 1
		}, 10*time.Second, 10*time.Millisecond)
	}()
	req := httptest.NewRequest(http.MethodPost, daemonapi.PathAdmit, strings.NewReader(podYAML("u1", 1)))
	req = req.WithContext(context.WithValue(req.Context(), peerKey{}, peerResult{}))
	rec := httptest.NewRecorder()
	t0 := time.Now()
	srv.Handler().ServeHTTP(rec, req)
	assert.Less(t, time.Since(t0), 5*time.Second)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "the request took longer than 200ms; an admission that was decided is kept")
}
