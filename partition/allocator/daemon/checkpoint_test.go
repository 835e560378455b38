package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

func sampleCheckpoint() *Checkpoint {
	return &Checkpoint{
		Partition:  "node0",
		Generation: 7,
		State: allocator.State{
			Machine: map[int]allocator.NodeState{0: {NumberOfAssignments: 1, Cells: []int{0}, MemoryMap: map[allocator.ResourceName]allocator.MemoryTable{
				allocator.ResourceMemory: {TotalMemSize: 16 << 30, SystemReserved: 1 << 30, Allocatable: 15 << 30, Reserved: 1 << 30, Free: 14 << 30},
			}}},
			Allocations: []allocator.Allocation{{PodUID: "u1", Pod: "ns/p", Admitted: true, Pinned: true, Containers: []allocator.ContainerDecision{
				{Name: "c", NUMANodes: bitmask.NewNodeSet(0), Memory: map[allocator.ResourceName]uint64{allocator.ResourceMemory: 1 << 30}},
			}}},
		},
		Digests: map[types.UID]string{"u1": "abc"},
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if cp, err := ReadCheckpoint(dir); cp != nil || err != nil {
		t.Fatalf("empty dir: got %v %v, want a first start (nil, nil)", cp, err)
	}
	want := sampleCheckpoint()
	if err := WriteCheckpoint(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustMarshal(t, got), mustMarshal(t, want)) {
		t.Fatalf("round trip:\n got %s\nwant %s", mustMarshal(t, got), mustMarshal(t, want))
	}
	fi, err := os.Stat(filepath.Join(dir, CheckpointName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("checkpoint mode %v %v, want 0600", fi.Mode(), err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, tempPattern)); len(tmps) != 0 {
		t.Fatalf("temp files left behind: %v", tmps)
	}
}

func TestCheckpointCorruptionIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := WriteCheckpoint(dir, sampleCheckpoint()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, CheckpointName)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func([]byte) []byte
		reason string
	}{
		{"bit flip in a number", func(b []byte) []byte {
			return regexp.MustCompile(`"generation":\s*7`).ReplaceAll(b, []byte(`"generation": 6`))
		}, "checksum mismatch"},
		{"bit flip in a UID", func(b []byte) []byte { return bytes.Replace(b, []byte(`"u1"`), []byte(`"u2"`), 1) }, "checksum mismatch"},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "not valid JSON"},
		{"empty file", func([]byte) []byte { return nil }, "not valid JSON"},
		{"zeroed (lost writeback)", func(b []byte) []byte { return make([]byte, len(b)) }, "not valid JSON"},
		{"checksum edited", func(b []byte) []byte { return bytes.Replace(b, []byte(`"sha256:`), []byte(`"sha256:0`), 1) }, "checksum mismatch"},
		{"future version", func(b []byte) []byte { return bytes.Replace(b, []byte(`"version":1`), []byte(`"version":2`), 1) }, "format version 2"},
		{"no data", func([]byte) []byte { return []byte(`{"version":1,"checksum":"x"}`) }, "no data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mutated := tt.mutate(bytes.Clone(orig))
			if bytes.Equal(mutated, orig) {
				t.Fatal("test bug: mutation changed nothing")
			}
			if err := os.WriteFile(path, mutated, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ReadCheckpoint(dir)
			var ce *CorruptError
			if !errors.As(err, &ce) || !strings.Contains(ce.Reason, tt.reason) || ce.Path != path {
				t.Fatalf("got %v, want a CorruptError for %s saying %q", err, path, tt.reason)
			}
		})
	}
	t.Run("reformatted whitespace is fine", func(t *testing.T) {
		pretty := bytes.ReplaceAll(orig, []byte(`,"`), []byte(",\n  \""))
		if err := os.WriteFile(path, pretty, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadCheckpoint(dir); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCheckpointFailedWriteKeepsOld(t *testing.T) {
	dir := t.TempDir()
	old := sampleCheckpoint()
	if err := WriteCheckpoint(dir, old); err != nil {
		t.Fatal(err)
	}
	// A directory in the way of the rename: the write must fail and leave
	// the old checkpoint and no temp file.
	blocked := t.TempDir()
	if err := os.Mkdir(filepath.Join(blocked, CheckpointName), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(blocked, CheckpointName, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteCheckpoint(blocked, old); err == nil {
		t.Fatal("rename over a non-empty directory succeeded")
	}
	if tmps, _ := filepath.Glob(filepath.Join(blocked, tempPattern)); len(tmps) != 0 {
		t.Fatalf("temp files left behind: %v", tmps)
	}
	// Stale temp files of a crash are removed at start, the checkpoint kept.
	if err := os.WriteFile(filepath.Join(dir, ".allocations.json.numa-partition-123"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := RemoveStaleTemps(dir); err != nil {
		t.Fatal(err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, tempPattern)); len(tmps) != 0 {
		t.Fatalf("stale temp files kept: %v", tmps)
	}
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Generation != old.Generation {
		t.Fatalf("checkpoint after cleanup: %v %v", cp, err)
	}
}

func TestLockStateDirIsExclusive(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockStateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockStateDir(dir); err == nil || !strings.Contains(err.Error(), "in use by another allocator daemon") {
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	unlock2, err := LockStateDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jsonEncode(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jsonEncode(b *bytes.Buffer, v any) error {
	data, err := json.Marshal(v)
	b.Write(data)
	return err
}
