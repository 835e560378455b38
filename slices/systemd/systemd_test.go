package systemd

import (
	"reflect"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

func TestMaskBytes(t *testing.T) {
	for _, tc := range []struct {
		list string
		want []byte
	}{
		{"", nil},
		{"0", []byte{1}},
		{"0-1", []byte{3}},
		{"8", []byte{0, 1}},
		{"0,7,9-10,63", []byte{0x81, 0x06, 0, 0, 0, 0, 0, 0x80}},
	} {
		ids := bitmask.MustParseCPUList(tc.list).IDs()
		got := maskBytes(ids)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("maskBytes(%s) = %v, want %v", tc.list, got, tc.want)
		}
		// systemd answers padded to 64-bit words
		padded := append(append([]byte{}, got...), make([]byte, 8-len(got)%8)...)
		if back := bitmask.NewCPUSet(maskIDs(padded)...); back.String() != tc.list {
			t.Errorf("maskIDs(%v) = %s, want %s", padded, back, tc.list)
		}
	}
}

func TestUnitType(t *testing.T) {
	for in, want := range map[string]string{"a.service": "Service", "node0.slice": "Slice", "init.scope": "Scope", "x": ""} {
		if got := unitType(in); got != want {
			t.Errorf("unitType(%q) = %q, want %q", in, got, want)
		}
	}
}
