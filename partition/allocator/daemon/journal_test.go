package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func journalServer(t *testing.T, dir string) *Server {
	t.Helper()
	s, err := NewServer(ServerOptions{Partition: "t", Config: smallConfig(), StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Changes are appended to the journal between compactions into the
// checkpoint, and every state read back is the last one written.
func TestJournalAppendsAndCompacts(t *testing.T) {
	dir := t.TempDir()
	s := journalServer(t, dir)
	journal := filepath.Join(dir, JournalName)
	for i := range 2*journalMaxRecords + 10 {
		uid := fmt.Sprintf("p%d", i)
		if resp, _, err := s.admit(manifest(t, uid)); err != nil || !resp.Decision.Admitted {
			t.Fatalf("admission %d: %+v %v", i, resp, err)
		}
		if _, _, err := s.release(types.UID(uid)); err != nil {
			t.Fatal(err)
		}
		cp, err := ReadCheckpoint(dir)
		if err != nil || cp.Generation != s.head {
			t.Fatalf("after change %d: %+v %v, want generation %d", i, cp, err, s.head)
		}
	}
	snap, err := os.ReadFile(filepath.Join(dir, CheckpointName))
	if err != nil {
		t.Fatal(err)
	}
	cp, reason := decodeCheckpoint(snap)
	if reason != "" || cp.Generation < s.head-journalMaxRecords {
		t.Fatalf("checkpoint at generation %v (%s); head %d: not compacted", cp, reason, s.head)
	}
	b, _ := os.ReadFile(journal)
	if n := strings.Count(string(b), "\n"); n == 0 || n > journalMaxRecords {
		t.Fatalf("journal of %d records", n)
	}
}

// A crash in the middle of an append leaves a torn tail: ignored (it
// was never acknowledged), and the next write of the restarted daemon
// compacts, so nothing is appended after it. A bad record followed by a
// good one is corruption, refused with the file's name.
func TestJournalTornTailAndCorruption(t *testing.T) {
	dir := t.TempDir()
	s := journalServer(t, dir)
	for _, uid := range []string{"a", "b", "c"} {
		if _, _, err := s.admit(manifest(t, uid)); err != nil {
			t.Fatal(err)
		}
	}
	journal := filepath.Join(dir, JournalName)
	good, err := os.ReadFile(journal)
	if err != nil || strings.Count(string(good), "\n") != 2 {
		t.Fatalf("journal after three changes (the first compacts): %d records, %v", strings.Count(string(good), "\n"), err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	for name, torn := range map[string]string{
		"half a record": lines[1][:len(lines[1])/2],
		"no newline":    strings.TrimSuffix(lines[1], "\n"),
		"zeros":         "\x00\x00\x00\x00",
	} {
		if err := os.WriteFile(journal, []byte(lines[0]+torn), 0o600); err != nil {
			t.Fatal(err)
		}
		cp, err := ReadCheckpoint(dir)
		if err != nil || cp.Generation != 2 {
			t.Fatalf("%s: %+v %v, want generation 2", name, cp, err)
		}
	}
	restarted := journalServer(t, dir)
	if resp, _, err := restarted.admit(manifest(t, "d")); err != nil || resp.Generation != 3 {
		t.Fatalf("after the torn tail: %+v %v", resp, err)
	}
	if b, _ := os.ReadFile(journal); len(b) != 0 {
		t.Fatalf("the restarted daemon's first write did not compact: journal %q", b)
	}
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Generation != 3 || len(cp.State.Allocations) != 3 {
		t.Fatalf("after the restart's write: %+v %v", cp, err)
	}

	bad := lines[0][:20] + "X" + lines[0][21:]
	if err := os.WriteFile(journal, []byte(bad+lines[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ReadCheckpoint(dir)
	if ce, ok := err.(*CorruptError); !ok || ce.Path != journal || !strings.Contains(ce.Reason, "valid records follow it") {
		t.Fatalf("a bad record before a good one: %v", err)
	}
}

// A failed append is undone: the change is answered 500 and rolled
// back, the journal holds what it held, and the next write (a
// compaction) goes on from the durable state.
func TestJournalAppendFailureUndoes(t *testing.T) {
	dir := t.TempDir()
	s := journalServer(t, dir)
	if _, _, err := s.admit(manifest(t, "kept")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.admit(manifest(t, "kept2")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, JournalName))
	s.journal.f.Close() // the next append fails
	if resp, status, err := s.admit(manifest(t, "lost")); err == nil || status != 500 {
		t.Fatalf("admission with a failing journal: %+v %d %v", resp, status, err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, JournalName)); string(after) != string(before) {
		t.Fatal("the failed append changed the journal")
	}
	if got := s.alloc.Allocations(); len(got) != 2 || s.head != 2 {
		t.Fatalf("after the failed append: %v, head %d", got, s.head)
	}
	if resp, _, err := s.admit(manifest(t, "after")); err != nil || resp.Generation != 3 {
		t.Fatalf("after the failure: %+v %v", resp, err)
	}
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Generation != 3 || cp.Digests["lost"] != "" || cp.Digests["after"] == "" {
		t.Fatalf("durable state: %+v %v", cp, err)
	}
}

// One decision is one durable write: every admission or release that
// changes the state, made one at a time, costs the journal exactly one
// append (one fdatasync) or, every journalMaxRecords+1 writes and at the
// run's first, one compaction into the checkpoint instead; a repeated
// admission and an unknown release write nothing.
func TestOneDurableWritePerDecision(t *testing.T) {
	s := journalServer(t, t.TempDir())
	changes := uint64(0)
	for i := range 3 * journalMaxRecords {
		uid := fmt.Sprintf("p%d", i)
		if resp, _, err := s.admit(manifest(t, uid)); err != nil || !resp.Decision.Admitted {
			t.Fatalf("admission %d: %+v %v", i, resp, err)
		}
		changes++
		if resp, _, err := s.admit(manifest(t, uid)); err != nil || !resp.Repeated {
			t.Fatalf("repeated admission %d: %+v %v", i, resp, err)
		}
		if _, _, err := s.release(types.UID(uid)); err != nil {
			t.Fatal(err)
		}
		changes++
		if _, status, _ := s.release("unknown"); status != 404 {
			t.Fatalf("unknown release: status %d", status)
		}
		if got := s.journal.appends + s.journal.compactions; got != changes {
			t.Fatalf("after %d changes, %d appends and %d compactions", changes, s.journal.appends, s.journal.compactions)
		}
	}
	if want := (changes + journalMaxRecords) / (journalMaxRecords + 1); s.journal.compactions != want {
		t.Fatalf("%d compactions in %d writes, want %d (one per %d)", s.journal.compactions, changes, want, journalMaxRecords+1)
	}
	t.Logf("%d changes: %d journal appends, %d compactions", changes, s.journal.appends, s.journal.compactions)
}
