package daemon

import (
	"bytes"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// FuzzDecodeCheckpoint: the checkpoint and the journal are read at every
// start, after any crash, from whatever is on disk. Whatever the bytes,
// decoding returns a state or a reason (never both, never a panic); a
// state it accepts encodes and decodes to the same state; a journal
// replayed gives a state or a reason, never both, and no record is newer
// than the state it gives.
func FuzzDecodeCheckpoint(f *testing.F) {
	good, err := encodeCheckpoint(sampleCheckpoint())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(append(append([]byte{}, good...), good...))
	f.Add(append(append([]byte{}, good...), good[:len(good)/2]...))
	cp := sampleCheckpoint()
	var uid types.UID
	if len(cp.State.Allocations) > 0 {
		uid = cp.State.Allocations[0].PodUID
	}
	next := &Checkpoint{Partition: cp.Partition, Generation: cp.Generation + 1, State: cp.State, Digests: cp.Digests}
	rec, err := encodeEnvelope(deltaVersion, diff(cp, next, map[types.UID]bool{uid: true, "gone": true}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(append(append([]byte{}, good...), rec...))
	f.Add(append(append([]byte{}, rec...), good...))
	f.Add([]byte(`{"version":1,"checksum":"sha256:00","data":{}}` + "\n"))
	f.Add([]byte("{\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		cp, reason := decodeCheckpoint(raw)
		if (cp == nil) == (reason == "") {
			t.Fatalf("decodeCheckpoint gave state %v and reason %q: want exactly one", cp, reason)
		}
		if cp != nil {
			again, err := encodeCheckpoint(cp)
			if err != nil {
				t.Fatalf("an accepted state does not encode: %v", err)
			}
			back, reason := decodeCheckpoint(bytes.TrimSuffix(again, []byte("\n")))
			if reason != "" {
				t.Fatalf("an accepted state, encoded again, is refused: %s", reason)
			}
			a, _ := json.Marshal(cp)
			b, _ := json.Marshal(back)
			if !bytes.Equal(a, b) {
				t.Fatalf("round trip changed the state:\n%s\n%s", a, b)
			}
		}
		last, reason := replay(nil, raw)
		if last != nil && reason != "" {
			t.Fatalf("replay gave a state and the reason %q", reason)
		}
		if last != nil {
			for _, line := range bytes.Split(raw, []byte("\n")) {
				if rec, r := decodeRecord(line); r == "" && rec.generation() > last.Generation {
					t.Fatalf("replay gave generation %d, a record holds %d", last.Generation, rec.generation())
				}
			}
		}
	})
}
