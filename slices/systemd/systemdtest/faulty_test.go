package systemdtest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/numa-partition/numa-partition/slices/systemd"
)

// recorder is a Manager that only records calls (for Faulty's own test).
type recorder struct {
	systemd.Manager
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
