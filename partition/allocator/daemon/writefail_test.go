package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/numa-partition/numa-partition/partition/allocator"
)

func smallConfig() allocator.Config {
	return allocator.Config{
		Nodes: []allocator.NodeResources{
			{ID: 0, Memory: 16 << 30, Reserved: map[allocator.ResourceName]uint64{allocator.ResourceMemory: 1 << 30}},
			{ID: 1, Memory: 16 << 30, Reserved: map[allocator.ResourceName]uint64{}},
		},
		Policy: "single-numa-node", Scope: "container",
	}
}

func manifest(t testing.TB, uid string) Manifest {
	t.Helper()
	m, err := DecodeManifest([]byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":%q},
	  "spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1","memory":"1Gi"}}}]}}`, uid)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCheckpointWriteFailureUndoes: while the checkpoint cannot be written,
// concurrent admissions and releases fail with 500 and leave no trace in
// memory or on disk; afterwards the daemon goes on from the durable state.
func TestCheckpointWriteFailureUndoes(t *testing.T) {
	dir := t.TempDir()
	s, err := testServer(t, ServerOptions{Partition: "t", Config: smallConfig(), StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	// Every write a checkpoint (no journal appends): the failure is
	// injected on its rename. TestJournalAppendFailureUndoes fails appends.
	s.journal.maxRecords = 0
	if resp, status, err := s.admit(manifest(t, "kept")); err != nil || !resp.Decision.Admitted || resp.Generation != 1 {
		t.Fatalf("first admission: %+v %d %v", resp, status, err)
	}
	// A non-empty directory where the checkpoint goes: rename(2) fails.
	path := filepath.Join(dir, CheckpointName)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "blocker"), 0o700); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, status, err := s.admit(manifest(t, fmt.Sprintf("lost-%d", i))); err == nil || status != 500 {
				t.Errorf("admission during failure: %+v %d %v", resp, status, err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, status, err := s.release("kept"); err == nil || status != 500 {
			t.Errorf("release during failure: %d %v", status, err)
		}
	}()
	wg.Wait()
	if got := s.alloc.Allocations(); len(got) != 1 || got[0].PodUID != "kept" || s.head != 1 || len(s.digests) != 1 {
		t.Fatalf("after failed writes: allocations %v head %d digests %v", got, s.head, s.digests)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	resp, _, err := s.admit(manifest(t, "after"))
	if err != nil || !resp.Decision.Admitted || resp.Generation != 2 {
		t.Fatalf("after recovery: %+v %v", resp, err)
	}
	cp, err := ReadCheckpoint(dir)
	if err != nil || cp.Generation != 2 || len(cp.State.Allocations) != 2 || cp.Digests["kept"] == "" || cp.Digests["after"] == "" {
		t.Fatalf("checkpoint after recovery: %+v %v", cp, err)
	}
	if !s.Healthy(0) {
		t.Fatal("unhealthy after recovering from a write failure")
	}
}
