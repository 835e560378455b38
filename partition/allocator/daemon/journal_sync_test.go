package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// An append is answered once written, before its fdatasync; the next
// write waits for that fdatasync, so the journal on the disk is always a
// prefix of the records answered.
func TestAppendAnsweredBeforeItsSyncAndNextWriteAfterIt(t *testing.T) {
	dir := t.TempDir()
	s := admitted(t, dir, "first") // the run's first write: a compaction
	syncing, release := holdSyncs(s)
	answered := make(chan error, 1)
	go func() {
		_, _, err := s.admit(manifest(t, "a"))
		answered <- err
	}()
	<-syncing // a's append is written; its fdatasync is held
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the admission waited for its fdatasync")
	}
	// What a SIGKILL now leaves: the kernel has the append.
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Digests["a"] == "" || cp.Generation != 2 {
		t.Fatalf("state read while a's fdatasync is held: %+v %v", cp, err)
	}
	journal := filepath.Join(dir, JournalName)
	before, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _, err := s.admit(manifest(t, "b"))
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("b answered while a's fdatasync was held: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if now, err := os.ReadFile(journal); err != nil || string(now) != string(before) {
		t.Fatalf("b appended before a's fdatasync returned: %d bytes, were %d (%v)", len(now), len(before), err)
	}
	close(release)
	<-syncing // b's, after a's returned
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Digests["b"] == "" || cp.Generation != 3 {
		t.Fatalf("state after b: %+v %v", cp, err)
	}
	settle(s)
}

// allocator.sync_before_answer: the answer waits for the fdatasync, and a
// failed one fails the change, which is undone and not answered.
func TestSyncBeforeAnswer(t *testing.T) {
	dir := t.TempDir()
	s, err := testServer(t, ServerOptions{Partition: "t", Config: smallConfig(), StateDir: dir, SyncBeforeAnswer: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.admit(manifest(t, "first")); err != nil { // a compaction
		t.Fatal(err)
	}
	syncing, release := holdSyncs(s)
	answered := make(chan error, 1)
	go func() {
		_, _, err := s.admit(manifest(t, "a"))
		answered <- err
	}()
	<-syncing
	select {
	case err := <-answered:
		t.Fatalf("answered before its fdatasync returned: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	s.journal.fdatasync = func(int) error { return syscall.EIO }
	if _, status, err := s.admit(manifest(t, "lost")); err == nil || status != 500 {
		t.Fatalf("admission whose fdatasync failed: %d %v, want 500", status, err)
	}
	settle(s)
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Digests["a"] == "" || cp.Digests["lost"] != "" || cp.Generation != 2 {
		t.Fatalf("state after the failed fdatasync: %+v %v", cp, err)
	}
	if got := s.alloc.Allocations(); len(got) != 2 || s.head != 2 {
		t.Fatalf("in memory after the failed fdatasync: %v, head %d", got, s.head)
	}
}

// holdSyncs makes each of s's fdatasyncs announce itself on syncing and
// wait for release to be closed.
func holdSyncs(s *Server) (syncing, release chan struct{}) {
	syncing, release = make(chan struct{}), make(chan struct{})
	s.journal.fdatasync = func(fd int) error {
		syncing <- struct{}{}
		<-release
		return syscall.Fdatasync(fd)
	}
	return syncing, release
}

// settle waits until the server's write in progress, its sync included,
// is done.
func settle(s *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.writing {
		s.cond.Wait()
	}
}

// A failed fdatasync after the answer: the state is written whole as the
// checkpoint, counted and logged, and the daemon goes on.
func TestFailedSyncWritesTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := admitted(t, dir, "first")
	failed := 0
	s.journal.fdatasync = func(int) error {
		failed++
		return syscall.EIO
	}
	if resp, _, err := s.admit(manifest(t, "a")); err != nil || !resp.Decision.Admitted {
		t.Fatalf("admission: %+v %v", resp, err)
	}
	settle(s)
	if failed != 1 {
		t.Fatalf("%d fdatasyncs, want 1", failed)
	}
	var m dto.Metric
	if err := s.metrics.errors.WithLabelValues("sync").Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
		got := m.GetCounter().GetValue()
		t.Fatalf("errors{op=sync} = %v, want 1", got)
	}
	// The checkpoint alone holds a, the journal nothing.
	if data, err := os.ReadFile(filepath.Join(dir, JournalName)); err != nil || len(data) != 0 {
		t.Fatalf("journal after the compaction: %d bytes, %v", len(data), err)
	}
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Digests["a"] == "" || cp.Generation != 2 {
		t.Fatalf("checkpoint after a failed fdatasync: %+v %v", cp, err)
	}
	if !s.Healthy(0) {
		t.Fatal("unhealthy after a failed fdatasync the checkpoint made up for")
	}
	if resp, _, err := s.admit(manifest(t, "b")); err != nil || !resp.Decision.Admitted || resp.Generation != 3 {
		t.Fatalf("admission after: %+v %v", resp, err)
	}
	settle(s)
}

// A failed fdatasync and a checkpoint that cannot be written: what was
// answered may not survive a crash of the OS, so the daemon refuses
// everything and fails its health check until it is restarted.
func TestFailedSyncAndCheckpointBreakTheDaemon(t *testing.T) {
	dir := t.TempDir()
	s := admitted(t, dir, "first")
	failSyncAndCheckpoint(s, dir)
	if _, _, err := s.admit(manifest(t, "a")); err != nil {
		t.Fatalf("admission: %v", err)
	}
	settle(s)
	if s.Healthy(0) {
		t.Fatal("healthy after the state could be put on the disk neither way")
	}
	if _, status, err := s.admit(manifest(t, "b")); err == nil || status != 503 {
		t.Fatalf("admission after: %d %v, want 503", status, err)
	}
}

// failSyncAndCheckpoint makes s's next fdatasync fail, and the checkpoint
// after it: a non-empty directory where the checkpoint goes, so
// rename(2) fails.
func failSyncAndCheckpoint(s *Server, dir string) {
	path := filepath.Join(dir, CheckpointName)
	s.journal.fdatasync = func(int) error {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("test: %w", err)
		}
		if err := os.MkdirAll(filepath.Join(path, "blocker"), 0o700); err != nil {
			return fmt.Errorf("test: %w", err)
		}
		return syscall.EIO
	}
}
