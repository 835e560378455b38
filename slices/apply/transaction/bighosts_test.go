package transaction

import (
	"fmt"
	"testing"

	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
)

// Plan on the big hosts of numatest (issue #41): the steps planned from
// the host's state to the bundle's, pure. apply --dry-run of them, the
// rest of apply, is slices/apply's BenchmarkApplyBigHosts.

// TestPlanBigHosts: on an empty host, the big hosts' bundles plan a
// start of every unit, and nothing once applied.
func TestPlanBigHosts(t *testing.T) {
	for _, s := range numatest.BigHosts {
		t.Run(s.Name, func(t *testing.T) {
			h := applytest.NewBigHost(t, s)
			d, err := NewDesired(h.Bundle, h.Mode)
			applytest.Must(t, err)
			fresh := Plan(d, Current{})
			if len(fresh) < len(h.Bundle.Units) {
				t.Errorf("%d steps from an empty host for %d units", len(fresh), len(h.Bundle.Units))
			}
			if steps := Plan(d, applied(d)); len(steps) != 0 {
				t.Errorf("steps on a host where it is applied: %v", stepNames(steps))
			}
		})
	}
}

// BenchmarkApplyBigHosts: for each big host, the steps from an empty
// host (fresh) and from one where the bundle is applied (noop), each
// NewDesired and Plan. Named as slices/apply's benchmark of the dry run
// (ApplyBigHosts/<shape>/dry-run), whose rows test/benchreport prints
// beside these.
func BenchmarkApplyBigHosts(b *testing.B) {
	for _, s := range numatest.BigHosts {
		h := applytest.NewBigHost(b, s)
		d, err := NewDesired(h.Bundle, h.Mode)
		applytest.Must(b, err)
		for _, c := range []struct {
			name string
			cur  Current
			want func(int) bool
		}{
			{"fresh", Current{}, func(n int) bool { return n >= len(h.Bundle.Units) }},
			{"noop", applied(d), func(n int) bool { return n == 0 }},
		} {
			b.Run(fmt.Sprintf("%s/plan=%s", s.Name, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					d, err := NewDesired(h.Bundle, h.Mode)
					if err != nil {
						b.Fatal(err)
					}
					if steps := Plan(d, c.cur); !c.want(len(steps)) {
						b.Fatalf("%d steps", len(steps))
					}
				}
				b.ReportMetric(float64(len(h.Bundle.Units)), "units")
				b.ReportMetric(float64(len(h.Bundle.Files)), "files")
			})
		}
	}
}

// BenchmarkPlan8Partitions is the pure part of slices/apply's
// BenchmarkApply8Partitions alone.
func BenchmarkPlan8Partitions(b *testing.B) {
	f := applytest.NewFixture(8)
	bun, err := f.Typed()
	if err != nil {
		b.Fatal(err)
	}
	d, err := NewDesired(bun, CgroupHybrid)
	if err != nil {
		b.Fatal(err)
	}
	cur := applied(d)
	for b.Loop() {
		if steps := Plan(d, cur); len(steps) != 0 {
			b.Fatal(stepNames(steps))
		}
	}
}
