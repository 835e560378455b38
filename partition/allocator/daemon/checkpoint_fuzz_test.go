package daemon

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeCheckpoint: the checkpoint and the journal are read at every
// start, after any crash, from whatever is on disk. Whatever the bytes,
// decoding returns a state or a reason (never both, never a panic); a
// state it accepts encodes and decodes to the same state; a journal's
// last record, when there is one, was itself a valid envelope and no
// later record is newer.
func FuzzDecodeCheckpoint(f *testing.F) {
	good, err := encodeCheckpoint(sampleCheckpoint())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(append(append([]byte{}, good...), good...))
	f.Add(append(append([]byte{}, good...), good[:len(good)/2]...))
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
		last, reason := lastRecord(raw)
		if last != nil && reason != "" {
			t.Fatalf("lastRecord gave a state and the reason %q", reason)
		}
		if last != nil {
			for _, line := range bytes.Split(raw, []byte("\n")) {
				if cp, r := decodeCheckpoint(line); r == "" && cp.Generation > last.Generation {
					t.Fatalf("lastRecord gave generation %d, a record holds %d", last.Generation, cp.Generation)
				}
			}
		}
	})
}
