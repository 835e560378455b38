package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func journalServer(t *testing.T, dir string) *Server {
	t.Helper()
	s, err := testServer(t, ServerOptions{Partition: "t", Config: smallConfig(), StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// admitted is a server on dir that admitted pods uids, one at a time.
func admitted(t *testing.T, dir string, uids ...string) *Server {
	t.Helper()
	s := journalServer(t, dir)
	for _, uid := range uids {
		if _, _, err := s.admit(manifest(t, uid)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Changes are appended to the journal between compactions into the
// checkpoint, and every state read back is the last one written.
func TestJournalAppendsAndCompacts(t *testing.T) {
	dir := t.TempDir()
	s := journalServer(t, dir)
	s.journal.maxRecords = 32 // every read below replays the journal
	maxRecords := uint64(s.journal.maxRecords)
	journal := filepath.Join(dir, JournalName)
	for i := range 2*maxRecords + 10 {
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
	if reason != "" || cp.Generation < s.head-maxRecords {
		t.Fatalf("checkpoint at generation %v (%s); head %d: not compacted", cp, reason, s.head)
	}
	b, _ := os.ReadFile(journal)
	if n := strings.Count(string(b), "\n"); n == 0 || n > int(maxRecords) {
		t.Fatalf("journal of %d records", n)
	}
}

// A crash in the middle of an append leaves a torn tail: ignored (it
// was never acknowledged), and the next write of the restarted daemon
// compacts, so nothing is appended after it. A bad record followed by a
// good one is corruption, refused with the file's name.
func TestJournalTornTailAndCorruption(t *testing.T) {
	dir := t.TempDir()
	admitted(t, dir, "a", "b", "c")
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
	if ce, ok := err.(*CorruptError); !ok || ce.Path != journal || !strings.Contains(ce.Reason, "record 1 (line 1, byte offset 0)") {
		t.Fatalf("a bad record before a good one: %v", err)
	}
}

// #38 (hostile host, second round): four pods admitted, the daemon
// killed, a byte flipped in each journal line, and the restarted daemon
// served the checkpoint's one allocation, silently: bad records at the
// end of the journal were taken for a torn tail. A complete line (one
// with its newline) was written whole and may have been answered, so a
// bad one is refused wherever it is; only a last line with no newline is
// a write a crash cut short.
func TestJournalCorruptRecordsAtTheEndAreRefused(t *testing.T) {
	dir := t.TempDir()
	admitted(t, dir, "a", "b", "c", "d") // the first write compacts: 3 records
	journal := filepath.Join(dir, JournalName)
	good, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")[:3]
	flip := func(line string) string { return line[:20] + "X" + line[21:] }
	offset1 := len(lines[0])
	for name, tc := range map[string]struct {
		journal, where string
	}{
		"a byte flipped in each line": {flip(lines[0]) + flip(lines[1]) + flip(lines[2]), "record 1 (line 1, byte offset 0)"},
		"two bad records at the end":  {lines[0] + flip(lines[1]) + flip(lines[2]), fmt.Sprintf("record 2 (line 2, byte offset %d)", offset1)},
		"the last record bad":         {lines[0] + lines[1] + flip(lines[2]), fmt.Sprintf("record 3 (line 3, byte offset %d)", offset1+len(lines[1]))},
		"a bad record, a torn tail":   {lines[0] + flip(lines[1]) + lines[2][:len(lines[2])/2], fmt.Sprintf("record 2 (line 2, byte offset %d)", offset1)},
		"an empty line at the end":    {lines[0] + "\n", fmt.Sprintf("record 2 (line 2, byte offset %d)", offset1)},
	} {
		if err := os.WriteFile(journal, []byte(tc.journal), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadCheckpoint(dir)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Path != journal {
			t.Fatalf("%s: %v, want the journal refused", name, err)
		}
		for _, want := range []string{tc.where, "the checkpoint is at generation 1"} {
			if !strings.Contains(ce.Reason, want) {
				t.Errorf("%s: the reason %q lacks %q", name, ce.Reason, want)
			}
		}
	}
	// What is forgiven is a torn final write alone: the valid records
	// before it are replayed.
	if err := os.WriteFile(journal, []byte(lines[0]+lines[1]+strings.TrimSuffix(lines[2], "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Generation != 3 || len(cp.State.Allocations) != 3 {
		t.Fatalf("a torn final write: %+v %v, want generation 3 with 3 allocations", cp, err)
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
	settle(s)
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
	s.journal.maxRecords = 64
	maxRecords := uint64(s.journal.maxRecords)
	changes := uint64(0)
	for i := range 3 * maxRecords {
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
	if want := (changes + maxRecords) / (maxRecords + 1); s.journal.compactions != want {
		t.Fatalf("%d compactions in %d writes, want %d (one per %d)", s.journal.compactions, changes, want, maxRecords+1)
	}
	t.Logf("%d changes: %d journal appends, %d compactions", changes, s.journal.appends, s.journal.compactions)
}

// sizedManifest is manifest with memory mem ("512Mi") and hugepages-free.
func sizedManifest(t testing.TB, uid, mem string) Manifest {
	t.Helper()
	m, err := DecodeManifest([]byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":%q},
	  "spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":"1","memory":%q},"requests":{"cpu":"1","memory":%q}}}]}}`, uid, mem, mem)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameState fails unless the state read back from dir is the server's
// durable one, byte for byte as JSON.
func sameState(t *testing.T, dir string, s *Server, when string) {
	t.Helper()
	got, err := ReadCheckpoint(dir)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	s.mu.Lock()
	want := s.durable
	s.mu.Unlock()
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: the checkpoint and its journal replay to\n%s\nthe durable state is\n%s", when, a, b)
	}
}

// #28: a journal record is the change, not the whole state. Whatever the
// history (admissions that fill nodes and are refused, releases, a pod
// released and admitted again with another manifest, concurrent
// admissions one group commit writes together), the checkpoint and its
// deltas replay to exactly the durable state; and a record's size does
// not grow with the pods the state holds.
func TestJournalDeltasReplayToTheDurableState(t *testing.T) {
	dir := t.TempDir()
	s := journalServer(t, dir)
	s.journal.maxRecords = 50 // compactions in between
	r := rand.New(rand.NewPCG(1, 2))
	var live []types.UID
	for i := range 300 {
		switch op := r.IntN(10); {
		case op < 6 || len(live) == 0:
			uid := types.UID(fmt.Sprintf("p%03d", r.IntN(400)))
			resp, _, err := s.admit(sizedManifest(t, string(uid), fmt.Sprintf("%dMi", 256*(1+r.IntN(16)))))
			if err == nil && resp.Decision.Admitted && !resp.Repeated {
				live = append(live, uid)
			}
		case op < 9:
			k := r.IntN(len(live))
			if _, _, err := s.release(live[k]); err != nil {
				t.Fatalf("release %s: %v", live[k], err)
			}
			live = slices.Delete(live, k, k+1)
		default:
			// Released and admitted again, with other resources.
			uid := live[r.IntN(len(live))]
			if _, _, err := s.release(uid); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.admit(sizedManifest(t, string(uid), "128Mi")); err != nil {
				t.Fatal(err)
			}
		}
		sameState(t, dir, s, fmt.Sprintf("after operation %d", i))
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, _ = s.admit(sizedManifest(t, fmt.Sprintf("c%d", i), "64Mi"))
		}()
	}
	wg.Wait()
	sameState(t, dir, s, "after concurrent admissions")
	if s.journal.appends == 0 || s.journal.compactions < 2 {
		t.Fatalf("%d appends, %d compactions: the history did not exercise both", s.journal.appends, s.journal.compactions)
	}

	// A record's size at 1 pod and at 200.
	size := func(pods int) int {
		s := journalServer(t, t.TempDir())
		for i := range pods {
			if _, _, err := s.admit(sizedManifest(t, fmt.Sprintf("s%03d", i), "1Mi")); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := s.admit(sizedManifest(t, "last", "1Mi")); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(s.stateDir, JournalName))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		return len(lines[len(lines)-1])
	}
	one, many := size(1), size(200)
	if many > one+64 {
		t.Fatalf("a record is %d bytes at 1 pod and %d at 200: it grows with the state", one, many)
	}
	t.Logf("one admission's record: %d bytes at 1 pod, %d at 200", one, many)
}

// A delta that does not start where the state is cannot be applied:
// refused, naming the record, as is one with no checkpoint before it.
// Journals of binaries before deltas (whole states a record) still read.
func TestJournalDeltaChain(t *testing.T) {
	dir := t.TempDir()
	admitted(t, dir, "a", "b", "c")
	journal := filepath.Join(dir, JournalName)
	good, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(good), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("journal of %d records, want 2", len(lines))
	}
	// The second record alone: it starts from generation 2, the
	// checkpoint is at 1.
	if err := os.WriteFile(journal, []byte(lines[1]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ReadCheckpoint(dir)
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "record 1 (line 1, byte offset 0): changes from generation 2, but the state before it is at generation 1") {
		t.Fatalf("a gap in the chain: %v", err)
	}
	if err := os.WriteFile(journal, good, 0o600); err != nil {
		t.Fatal(err)
	}
	cp0, err := ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	lie := &delta{Partition: cp0.Partition, Base: cp0.Generation, Generation: cp0.Generation + 1,
		Pods: map[types.UID]*podChange{"x": {Allocation: cp0.State.Allocations[0], Digest: "d"}}}
	lieRec, err := encodeEnvelope(deltaVersion, lie)
	if err != nil {
		t.Fatal(err)
	}
	if _, reason := decodeRecord(bytes.TrimSuffix(lieRec, []byte("\n"))); reason != `pod "x" holds the allocation of pod "a"` {
		t.Fatalf("a record that moves an allocation to another pod: %q", reason)
	}
	if err := os.WriteFile(journal, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, CheckpointName)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCheckpoint(dir); !errors.As(err, &ce) || !strings.Contains(ce.Reason, "no checkpoint they apply to") {
		t.Fatalf("deltas without a checkpoint: %v", err)
	}

	// An older binary's journal: whole states.
	old := t.TempDir()
	cp := sampleCheckpoint()
	if err := WriteCheckpoint(old, cp); err != nil {
		t.Fatal(err)
	}
	next := *cp
	next.Generation++
	rec, err := encodeCheckpoint(&next)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, JournalName), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadCheckpoint(old); err != nil || got.Generation != next.Generation {
		t.Fatalf("a journal of whole states: %+v %v", got, err)
	}
}

// A clean stop compacts: the checkpoint holds the whole state and the
// journal is empty, which a build that reads no deltas needs.
func TestCompactLeavesTheStateWholeInTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := admitted(t, dir, "a", "b", "c")
	if b, _ := os.ReadFile(filepath.Join(dir, JournalName)); len(b) == 0 {
		t.Fatal("no journal records before the stop")
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, JournalName)); len(b) != 0 {
		t.Fatalf("journal after Compact: %q", b)
	}
	raw, err := os.ReadFile(filepath.Join(dir, CheckpointName))
	if err != nil {
		t.Fatal(err)
	}
	cp, reason := decodeCheckpoint(bytes.TrimSuffix(raw, []byte("\n")))
	if reason != "" || cp.Generation != 3 || len(cp.State.Allocations) != 3 {
		t.Fatalf("checkpoint after Compact: %+v %s", cp, reason)
	}
	sameState(t, dir, s, "after Compact")
	if err := s.Compact(); err != nil || s.journal.compactions != 2 {
		t.Fatalf("a second Compact with nothing to compact: %v, %d compactions", err, s.journal.compactions)
	}
}
