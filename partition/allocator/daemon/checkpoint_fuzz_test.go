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
// than the state it gives. Only a torn final write (a last line with no
// newline) is forgiven (#38): a journal with a complete line that does
// not decode is refused, and a torn tail changes nothing of what the
// complete lines before it give.
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
	bad := bytes.Replace(rec, []byte(`"base"`), []byte(`"bAse"`), 1)
	f.Add(append(append(append([]byte{}, good...), bad...), bad...))              // two bad records at the end
	f.Add(append(append(append([]byte{}, good...), bad...), rec[:len(rec)/2]...)) // a bad one and a torn tail
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
		complete := raw[:bytes.LastIndexByte(raw, '\n')+1]
		for line := range bytes.Lines(complete) {
			if _, r := decodeRecord(bytes.TrimSuffix(line, []byte("\n"))); r != "" && reason == "" {
				t.Fatalf("replay accepted a journal with the complete line %q, which does not decode: %s", line, r)
			}
		}
		whole, wholeReason := replay(nil, complete)
		if wholeReason != reason || generationOf(whole) != generationOf(last) {
			t.Fatalf("the torn tail %q changed the replay: generation %d (%q) without it, %d (%q) with it",
				raw[len(complete):], generationOf(whole), wholeReason, generationOf(last), reason)
		}
	})
}

// generationOf is cp's generation; 0 for none.
func generationOf(cp *Checkpoint) uint64 {
	if cp == nil {
		return 0
	}
	return cp.Generation
}
