package record

import (
	"strings"
	"testing"
)

// FuzzParseRecord: status, apply and remove start from the record on
// disk, whatever a crash or a hand edit left there: it decodes or is
// refused with an error naming the file, never a panic, and a record it
// decodes writes back into one that decodes the same.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"generation":3,"pending":true,"files":[{"path":"etc/systemd/system/node0.slice","sha256":"00","mode":420}],"units":[{"name":"node0.slice","phase":0,"enable":false,"start":true,"files":[]}]}`))
	f.Add([]byte(`{"partitions":[{"name":"a","network":{"namespace":"np-a","address":"10.0.0.2/24"}}],"cordoned":[{"partition":"a","node":"n"}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"generation":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := parse("ROOT/record.json", data)
		if err != nil {
			if !strings.Contains(err.Error(), "ROOT/record.json") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		b, err := rec.Marshal()
		if err != nil {
			return // a value JSON cannot write (none known); not a crash
		}
		again, err := parse("ROOT/record.json", b)
		if err != nil {
			t.Fatalf("a decoded record, written back, is refused: %v\n%s", err, b)
		}
		b2, _ := again.Marshal()
		if string(b) != string(b2) {
			t.Fatalf("a decoded record changes when written back:\n%s\n%s", b, b2)
		}
	})
}

// Issue 27: the record kept a partition's CPUs and nodes as strings that
// status parsed back, ignoring the error (a partition with nodes "x"
// showed no nodes). They are sets now: a record that lies is refused,
// naming the file. So are the host's reserved CPUs.
func TestRecordSetsAreParsedWhenRead(t *testing.T) {
	rec, err := parse("ROOT/record.json", []byte(`{"reservedCPUs":"0-1,8","partitions":[{"name":"a","slice":"a.slice","nodes":"0-1","cpus":"2-5"}]}`))
	must(t, err)
	if got := rec.Partitions[0]; got.Nodes.String() != "0-1" || got.CPUs.String() != "2-5" {
		t.Errorf("read %+v", got)
	}
	if got := rec.ReservedCPUs.String(); got != "0-1,8" {
		t.Errorf("reservedCPUs read as %q", got)
	}
	for _, bad := range []string{`"partitions":[{"name":"a","nodes":"x"}]`, `"partitions":[{"name":"a","cpus":"3-1"}]`,
		`"partitions":[{"name":"a","nodes":7}]`, `"reservedCPUs":"0-x"`, `"reservedCPUs":[0]`} {
		_, err := parse("ROOT/record.json", []byte(`{`+bad+`}`))
		if err == nil || !strings.Contains(err.Error(), "ROOT/record.json") {
			t.Errorf("%s: %v, want an error naming the file", bad, err)
		}
	}
	// A record without reserved CPUs (as records before them) reads as
	// none and is written back without the key.
	rec, err = parse("ROOT/record.json", []byte(`{"generation":1}`))
	must(t, err)
	b, err := rec.Marshal()
	must(t, err)
	if !rec.ReservedCPUs.IsEmpty() || strings.Contains(string(b), "reservedCPUs") {
		t.Errorf("no reserved CPUs: read %v, written %s", rec.ReservedCPUs, b)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
