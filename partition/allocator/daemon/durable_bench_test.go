package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// durableBenchDir is where BenchmarkDurableDecision writes:
// NUMA_PARTITION_BENCH_DIR when set (a directory on the disk the state
// directory would be on), else the test's temporary directory. On tmpfs
// an fsync costs nothing, and so would the figures.
func durableBenchDir(b *testing.B) string {
	if d := os.Getenv("NUMA_PARTITION_BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "durable-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}

// durableServer is an in-process server holding pods admitted pods
// (1 GiB each, nodes large enough that none is refused).
func durableServer(b *testing.B, pods int) (*Server, []types.UID) {
	cfg := smallConfig()
	for i := range cfg.Nodes {
		cfg.Nodes[i].Memory = 1 << 40
	}
	s, err := NewServer(ServerOptions{Partition: "bench", Config: cfg, StateDir: durableBenchDir(b), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	var live []types.UID
	for i := range pods {
		m := manifest(b, fmt.Sprintf("live-%05d", i))
		if resp, _, err := s.admit(m); err != nil || !resp.Decision.Admitted {
			b.Fatalf("admission %d: %+v %v", i, resp.Decision, err)
		}
		live = append(live, m.UID)
	}
	settle(s) // the last admission's fdatasync, before a benchmark writes the journal itself
	return s, live
}

// BenchmarkDurableDecision is the cost of making one decision durable,
// in process (no socket, no HTTP), with the state at 16 and 256 pods
// (state-bytes is the whole state's size, the checkpoint's; record-bytes
// a journal record's, the delta of one decision):
//
//   - answer: one op is an admission or a release (alternately, so
//     the state keeps its size) from the lock to the answer, each once
//     the previous one's fdatasync is done: the decision and its one
//     durable write, a journal append (a compaction into the
//     checkpoint every journalMaxRecords, amortized in the figure).
//   - decision: the same back to back, so each also waits for the
//     previous append's fdatasync: the cost of sequential decisions.
//   - write=journal: that durable write alone, its fdatasync included
//     (journal.write and sync of one pod's change).
//   - write=checkpoint: the checkpoint written in its place
//     (WriteCheckpoint: temp file, fsync, rename, directory fsync),
//     which is what every decision cost before the journal.
//
// Set NUMA_PARTITION_BENCH_DIR to a directory on a real disk when the
// temporary directory is on tmpfs. Run:
//
//	go test -run '^$' -bench DurableDecision -benchtime 2000x ./partition/allocator/daemon
func BenchmarkDurableDecision(b *testing.B) {
	for _, pods := range []int{16, 256} {
		for _, kind := range []string{"decision", "answer"} {
			b.Run(fmt.Sprintf("pods=%d/%s", pods, kind), func(b *testing.B) {
				benchDecisions(b, pods, kind == "answer")
			})
		}
		for _, via := range []string{"journal", "checkpoint"} {
			b.Run(fmt.Sprintf("pods=%d/write=%s", pods, via), func(b *testing.B) {
				s, live := durableServer(b, pods)
				changed := map[types.UID]bool{live[0]: true}
				gen := s.head
				b.ResetTimer()
				for range b.N {
					gen++
					cp := &Checkpoint{Partition: s.partition, Generation: gen, State: s.durable.State, Digests: s.durable.Digests}
					var err error
					if via == "journal" {
						if _, err = s.journal.write(cp, changed); err == nil {
							err = s.journal.sync()
						}
					} else {
						err = WriteCheckpoint(s.stateDir, cp)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				reportSizes(b, s)
			})
		}
	}
}

// benchDecisions times decisions: an admission or a release in turn,
// so the state keeps its size. Spaced, each starts once the previous
// one's fdatasync is done (outside the timer), as containers created
// milliseconds apart do: its time is the answer's. Back to back, each
// also waits for the previous fdatasync: the sequential throughput.
func benchDecisions(b *testing.B, pods int, spaced bool) {
	s, live := durableServer(b, pods)
	admits := make([]Manifest, b.N/2+1)
	for i := range admits {
		admits[i] = manifest(b, fmt.Sprintf("bench-%07d", i))
	}
	b.ResetTimer()
	for i := range b.N {
		if spaced {
			b.StopTimer()
			settle(s)
			b.StartTimer()
		}
		if i%2 == 0 {
			if _, _, err := s.release(live[0]); err != nil {
				b.Fatal(err)
			}
			live = live[1:]
			continue
		}
		m := admits[i/2]
		if resp, _, err := s.admit(m); err != nil || !resp.Decision.Admitted {
			b.Fatalf("admission %d: %+v %v", i, resp.Decision, err)
		}
		live = append(live, m.UID)
	}
	b.StopTimer()
	settle(s)
	reportSizes(b, s)
}

// reportSizes reports the size of the server's state as the checkpoint
// (state-bytes) and of a journal record of one pod's admission
// (record-bytes).
func reportSizes(b *testing.B, s *Server) {
	cp := &Checkpoint{Partition: s.partition, Generation: s.head, State: s.alloc.State(), Digests: s.digests}
	state, err := encodeCheckpoint(cp)
	if err != nil {
		b.Fatal(err)
	}
	prev := &Checkpoint{Partition: cp.Partition, Generation: cp.Generation - 1, State: cp.State, Digests: cp.Digests}
	rec, err := encodeEnvelope(deltaVersion, diff(prev, cp, map[types.UID]bool{cp.State.Allocations[0].PodUID: true}))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(state)), "state-bytes")
	b.ReportMetric(float64(len(rec)), "record-bytes")
}
