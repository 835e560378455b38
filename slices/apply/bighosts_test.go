package apply

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/render"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// Apply on the big hosts of numatest (issue #41). Their bundles cannot
// be applied to a real systemd on a test machine: their slices name 144
// to 512 CPUs and 34 nodes the machine lacks, and their units run real
// containerds and kubelets. What is measured here is the rest of apply,
// the real code on the real bundle: the steps planned from the host's
// state to the bundle's (Plan, pure), and apply --dry-run of a root no
// systemd runs on (Offline: the tree's files, record, unit files and
// hugepage pools read, the steps planned, the diff made). The cost of
// systemd's jobs per partition is BenchmarkApply8Partitions's, on the
// sandbox's real systemd.

// bigHost is a shape's tree, plan (with the examples' host facts in the
// shape's cgroup mode) and bundle.
type bigHost struct {
	mode   CgroupMode
	sysfs  string
	plan   *planner.Plan
	bundle bundle.Bundle
}

func newBigHost(t testing.TB, s numatest.Shape) bigHost {
	t.Helper()
	h := bigHost{mode: s.Cgroup, sysfs: s.WriteTemp(t)}
	topo, err := numa.NewFS(h.sysfs).Discover()
	must(t, err)
	c, err := config.Parse(s.Name+".toml", []byte(s.Config))
	must(t, err)
	facts := planner.ExampleFacts
	facts.Cgroup = s.Cgroup
	h.plan, err = planner.NewPlanFor(topo, facts, c)
	must(t, err)
	h.bundle, err = render.Render(*h.plan)
	must(t, err)
	return h
}

// dryRun is apply --dry-run of the bundle on an empty root no systemd
// runs on.
func (h bigHost) dryRun(t testing.TB, root string) *Report {
	t.Helper()
	o := Options{Root: root, Sysfs: h.sysfs, Systemd: systemd.NewOffline(root), Offline: true, DryRun: true,
		CgroupMode: h.mode, Version: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	rep, err := Apply(context.Background(), o, h.bundle)
	must(t, err)
	return rep
}

// TestApplyPlansBigHosts: on an empty host, the big hosts' bundles plan
// a start of every unit, and nothing once applied; offline, the dry run
// lists as many steps.
func TestApplyPlansBigHosts(t *testing.T) {
	for _, s := range numatest.BigHosts {
		t.Run(s.Name, func(t *testing.T) {
			h := newBigHost(t, s)
			d, err := NewDesired(h.bundle, h.mode)
			must(t, err)
			fresh := Plan(d, Current{})
			if len(fresh) < len(h.bundle.Units) {
				t.Errorf("%d steps from an empty host for %d units", len(fresh), len(h.bundle.Units))
			}
			if steps := Plan(d, applied(d)); len(steps) != 0 {
				t.Errorf("steps on a host where it is applied: %v", stepNames(steps))
			}
			rep := h.dryRun(t, t.TempDir())
			if !rep.Changed || !rep.Offline || len(rep.Steps) != len(fresh) {
				t.Errorf("dry run: changed %v, offline %v, %d steps (Plan: %d)\n%s", rep.Changed, rep.Offline, len(rep.Steps), len(fresh), strings.Join(rep.Steps, "\n"))
			}
		})
	}
}

// BenchmarkApplyBigHosts: for each big host, the steps from an empty
// host (fresh) and from one where the bundle is applied (noop), each
// NewDesired and Plan; then apply --dry-run, offline, on an empty root
// (dry-run).
func BenchmarkApplyBigHosts(b *testing.B) {
	for _, s := range numatest.BigHosts {
		h := newBigHost(b, s)
		d, err := NewDesired(h.bundle, h.mode)
		must(b, err)
		for _, c := range []struct {
			name string
			cur  Current
			want func(int) bool
		}{
			{"fresh", Current{}, func(n int) bool { return n >= len(h.bundle.Units) }},
			{"noop", applied(d), func(n int) bool { return n == 0 }},
		} {
			b.Run(fmt.Sprintf("%s/plan=%s", s.Name, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					d, err := NewDesired(h.bundle, h.mode)
					if err != nil {
						b.Fatal(err)
					}
					if steps := Plan(d, c.cur); !c.want(len(steps)) {
						b.Fatalf("%d steps", len(steps))
					}
				}
				b.ReportMetric(float64(len(h.bundle.Units)), "units")
				b.ReportMetric(float64(len(h.bundle.Files)), "files")
			})
		}
		b.Run(s.Name+"/dry-run", func(b *testing.B) {
			root := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				h.dryRun(b, root)
			}
		})
	}
}
