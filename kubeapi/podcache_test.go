package kubeapi_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

func boundPod(name, uid, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid)},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app"}}}}
}

// startCache runs a PodCache of host-node0 with that kubelet's
// certificate until the test ends.
func startCache(t *testing.T, s *kubeapitest.Server, wait time.Duration, o kubeapi.Options) *kubeapi.PodCache {
	t.Helper()
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	kc := write(t, t.TempDir(), map[string][]byte{"kubelet.conf": s.Kubeconfig(t, map[string]string{
		"client-certificate-data": base64.StdEncoding.EncodeToString(cert), "client-key-data": base64.StdEncoding.EncodeToString(key)})})
	c := kubeapi.NewPodCache(filepath.Join(kc, "kubelet.conf"), "host-node0", wait, o, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// waitFor polls cond (the cache works in the background).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// The cache lists the Node's pods, follows the watch (added, changed,
// deleted), never holds another Node's pods, and lists again when its
// watch resumes from a compacted resourceVersion (410 Gone).
func TestPodCacheFollowsTheWatch(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetPod(boundPod("web", "u1", "host-node0"))
	s.SetPod(boundPod("db", "u2", "host-node1"))
	c := startCache(t, s, 5*time.Second, kubeapi.Options{})
	ctx := context.Background()

	p, err := c.Pod(ctx, "ns", "web")
	if err != nil || p.UID != "u1" {
		t.Fatalf("listed pod: %v %v", p, err)
	}
	// A pod bound after the list: the read waits for the watch.
	go s.SetPod(boundPod("vm", "u3", "host-node0"))
	if p, err := c.Pod(ctx, "ns", "vm"); err != nil || p.UID != "u3" {
		t.Fatalf("watched pod: %v %v", p, err)
	}
	s.DeletePod("ns", "web")
	s.SetPod(boundPod("web", "u4", "host-node0")) // replaced under the same name
	waitFor(t, "the replaced pod", func() bool { p, err := c.Pod(ctx, "ns", "web"); return err == nil && p.UID == "u4" })

	// The watch ends (API server restart) and a deletion it did not see
	// is compacted meanwhile: the cache lists again and misses nothing.
	release := s.Stall()
	s.DeletePod("ns", "vm")
	s.Compact()
	s.EndWatches()
	release()
	waitFor(t, "a second list", func() bool { return c.Status().Lists == 2 })
	waitFor(t, "the deletion", func() bool { return c.Status().Pods == 1 })
	st := c.Status()
	if !st.Synced || st.LastError != "" {
		t.Errorf("status after the re-list: %+v", st)
	}

	short := kubeapi.NewPodCache("unused", "host-node0", 50*time.Millisecond, kubeapi.Options{}, nil)
	if _, err := short.Pod(ctx, "ns", "web"); err == nil || !strings.Contains(err.Error(), "the first list of its pods has not been answered yet") {
		t.Errorf("a cache that never listed: %v", err)
	}
	brief, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Pod(brief, "ns", "db"); err == nil || !strings.Contains(err.Error(), "no such pod bound to the Node (its watch is open; last heard from it ") {
		t.Errorf("another Node's pod: %v", err)
	}
	if st := c.Status(); st.LastHeard.IsZero() || time.Since(st.LastHeard) > time.Minute {
		t.Errorf("last heard from the API server: %v", st.LastHeard)
	}
	if s.Gets("/api/v1/namespaces/ns/pods/web") != 0 {
		t.Error("the cache read a pod with a GET")
	}
}

// A stalled API server: a pod already in the cache is still read at
// once; one that is not makes its reader wait, bounded, with the reason;
// the failure shows in the status, and the cache recovers when the API
// server answers again.
func TestPodCacheStalledAPIServer(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetPod(boundPod("web", "u1", "host-node0"))
	c := startCache(t, s, 5*time.Second, kubeapi.Options{Timeout: 500 * time.Millisecond})
	ctx := context.Background()
	if _, err := c.Pod(ctx, "ns", "web"); err != nil {
		t.Fatal(err)
	}
	before := c.Status()
	release := s.Stall()
	s.EndWatches() // the next watch request meets the stalled server
	waitFor(t, "a failure", func() bool { return c.Status().Errors > 0 })
	if p, err := c.Pod(ctx, "ns", "web"); err != nil || p.UID != "u1" {
		t.Fatalf("a cached pod while the API server is stalled: %v %v", p, err)
	}
	brief, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := c.Pod(brief, "ns", "vm")
	if err == nil || !strings.Contains(err.Error(), "the API server has been failing since") || !strings.Contains(err.Error(), "API server unreachable") {
		t.Fatalf("a pod not in the cache: %v", err)
	}
	st := c.Status()
	if st.Synced || st.Timeouts != before.Timeouts+1 || st.Waits != before.Waits+1 {
		t.Errorf("status while stalled: %+v", st)
	}
	s.SetPod(boundPod("vm", "u3", "host-node0"))
	release()
	if p, err := c.Pod(ctx, "ns", "vm"); err != nil || p.UID != "u3" {
		t.Fatalf("after the stall: %v %v", p, err)
	}
	waitFor(t, "recovery", func() bool { return c.Status().Synced })
	cancelled, cancelNow := context.WithCancel(ctx)
	cancelNow()
	if _, err := c.Pod(cancelled, "ns", "gone"); !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("a cancelled read: %v", err)
	}
}

// After a long failure the cache's backoff has grown past a reader's
// wait: a reader that misses while the cache fails makes it retry at
// once, so an API server that answers again serves the pod within the
// wait rather than after the backoff.
func TestPodCacheRetriesForAReader(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetPod(boundPod("web", "u1", "host-node0"))
	c := startCache(t, s, time.Second, kubeapi.Options{Timeout: 200 * time.Millisecond})
	ctx := context.Background()
	if _, err := c.Pod(ctx, "ns", "web"); err != nil {
		t.Fatal(err)
	}
	release := s.Stall()
	s.EndWatches()
	// Five failures: the backoff is 200 ms × 2⁵ = 6.4 s now.
	for deadline := time.Now().Add(time.Minute); c.Status().Errors < 5; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			release()
			t.Fatalf("the stalled API server failed the cache only %d times", c.Status().Errors)
		}
	}
	s.SetPod(boundPod("vm", "u3", "host-node0"))
	release()
	if p, err := c.Pod(ctx, "ns", "vm"); err != nil || p.UID != "u3" {
		t.Fatalf("a pod bound while the API server was stalled, read with a 1 s wait after it answers again: %v %v", p, err)
	}
}

// The API server drops the cache's watch again and again (restarts, a
// load balancer's idle cut) while pods come and go: client-go's reflector
// watches again from where it was, or lists again, and the cache
// converges on the pods as they are, slimmed (no managedFields).
func TestPodCacheConvergesAfterDroppedWatches(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetPod(boundPod("web", "u1", "host-node0"))
	c := startCache(t, s, 5*time.Second, kubeapi.Options{})
	ctx := context.Background()
	if _, err := c.Pod(ctx, "ns", "web"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s.EndWatches()
		p := boundPod(fmt.Sprintf("vm%d", i), fmt.Sprintf("u-vm%d", i), "host-node0")
		p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
		s.SetPod(p)
		time.Sleep(300 * time.Millisecond)
	}
	s.DeletePod("ns", "web")
	s.EndWatches()
	waitFor(t, "the pods as they are", func() bool { return c.Status().Pods == 3 && c.Status().Synced })
	for i := range 3 {
		p, err := c.Pod(ctx, "ns", fmt.Sprintf("vm%d", i))
		if err != nil || p.UID != types.UID(fmt.Sprintf("u-vm%d", i)) || p.ManagedFields != nil {
			t.Errorf("vm%d: %v %v", i, p, err)
		}
	}
	brief, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Pod(brief, "ns", "web"); err == nil {
		t.Error("the deleted pod is still in the cache")
	}
	if st := c.Status(); st.LastError != "" || st.Errors != 0 {
		t.Errorf("status after dropped watches: %+v", st)
	}
}
