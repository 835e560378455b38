package apply

import (
	"context"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
)

// BenchmarkApply8Partitions applies an 8-partition bundle (25 units, 41
// files on cgroup v1) to a clean sandbox host; remove between iterations
// is not timed.
func BenchmarkApply8Partitions(b *testing.B) {
	e := newEnv(b)
	f := applytest.NewFixture(8)
	for b.Loop() {
		if _, err := e.apply(b, f, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := Remove(context.Background(), e.opts()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkReapplyNoop re-applies the same 8-partition bundle: gather
// (files, 25 units over D-Bus) and an empty plan.
func BenchmarkReapplyNoop(b *testing.B) {
	e := newEnv(b)
	f := applytest.NewFixture(8)
	if _, err := e.apply(b, f, nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rep, err := e.apply(b, f, nil)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Changed {
			b.Fatalf("re-apply changed: %v", rep.Steps)
		}
	}
}
