package daemon

import (
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/partition/allocator"
)

// Repro (#24): a checkpoint at generation 2^64-1 (a hand-edited file, the
// checksum recomputed) made the next admission's generation wrap to 0;
// waitDurable took 0 ≤ the durable 2^64-1 for "already on disk", so the
// admission was answered without ever being written, and a restart
// forgot it. A change at the maximum is refused instead, naming the way
// out, and nothing is decided or written.
func TestGenerationDoesNotWrapAtItsMaximum(t *testing.T) {
	dir := t.TempDir()
	a, err := allocator.New(smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCheckpoint(dir, &Checkpoint{Partition: "t", Generation: math.MaxUint64, State: a.State()}); err != nil {
		t.Fatal(err)
	}
	s, err := testServer(t, ServerOptions{Partition: "t", Config: smallConfig(), StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	resp, status, err := s.admit(manifest(t, "after-max"))
	if err == nil || status != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "generation") || !strings.Contains(err.Error(), "reset-state") {
		t.Fatalf("admission at the maximum generation: %+v, status %d, %v; want a 503 naming the generation and reset-state", resp, status, err)
	}
	if got := s.alloc.Allocations(); len(got) != 0 || s.head != math.MaxUint64 {
		t.Fatalf("after the refused admission: allocations %v, head %d", got, s.head)
	}
	if _, status, err := s.release("after-max"); err == nil || status != http.StatusServiceUnavailable {
		t.Fatalf("release at the maximum generation: status %d, %v; want a 503", status, err)
	}
	cp, err := ReadCheckpoint(dir)
	if err != nil || cp.Generation != math.MaxUint64 || len(cp.State.Allocations) != 0 {
		t.Fatalf("checkpoint after the refusals: %+v, %v; want it untouched at 2^64-1", cp, err)
	}

	// One below the maximum: the last change is still taken, and durable.
	dir = t.TempDir()
	if err := WriteCheckpoint(dir, &Checkpoint{Partition: "t", Generation: math.MaxUint64 - 1, State: a.State()}); err != nil {
		t.Fatal(err)
	}
	s, err = testServer(t, ServerOptions{Partition: "t", Config: smallConfig(), StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if resp, _, err := s.admit(manifest(t, "last")); err != nil || !resp.Decision.Admitted || resp.Generation != math.MaxUint64 {
		t.Fatalf("the last admission: %+v, %v", resp, err)
	}
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Generation != math.MaxUint64 || len(cp.State.Allocations) != 1 {
		t.Fatalf("checkpoint after the last admission: %+v, %v", cp, err)
	}
	if _, _, err := s.admit(manifest(t, "one-more")); err == nil {
		t.Fatal("an admission past the maximum generation was taken")
	}
}
