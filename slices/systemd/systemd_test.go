package systemd

import (
	"context"
	"errors"
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

// recorder is a Manager that only records calls (for Faulty's own test).
type recorder struct {
	Manager
	calls []string
}

func (r *recorder) Reload(context.Context) error { r.calls = append(r.calls, "reload"); return nil }
func (r *recorder) StartUnit(_ context.Context, n string) error {
	r.calls = append(r.calls, "start "+n)
	return nil
}

func TestFaultyFailsExactlyOneCall(t *testing.T) {
	ctx := context.Background()
	for _, after := range []bool{false, true} {
		r := &recorder{}
		f := &Faulty{Manager: r, FailAt: 2, After: after}
		if err := f.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		err := f.StartUnit(ctx, "a.service")
		if !errors.Is(err, ErrInjected) {
			t.Fatalf("call 2: %v, want the injected fault", err)
		}
		if err := f.StartUnit(ctx, "b.service"); err != nil {
			t.Fatalf("call 3 after the fault: %v", err)
		}
		want := []string{"reload", "start b.service"}
		if after {
			want = []string{"reload", "start a.service", "start b.service"}
		}
		if !reflect.DeepEqual(r.calls, want) || f.Count() != 3 {
			t.Errorf("after=%v: inner calls %v (count %d), want %v (3)", after, r.calls, f.Count(), want)
		}
	}
}
