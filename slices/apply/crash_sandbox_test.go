package apply

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
)

// errCrash is the panic that stands for a kill -9 in the middle of an
// apply: it leaves through BeforeStep, so no rollback runs and the host is
// as the killed process left it.
type errCrash struct{ step int }

// crashAt applies f and "kills" the apply before step i.
func (e *env) crashAt(t *testing.T, f *applytest.Fixture, i int) {
	t.Helper()
	defer func() {
		r := recover()
		if c, ok := r.(errCrash); !ok || c.step != i {
			t.Fatalf("apply did not crash at step %d: %v", i+1, r)
		}
	}()
	_, err := e.apply(t, f, func(o *Options) {
		o.BeforeStep = func(j int, s transaction.Step) error {
			if j == i {
				panic(errCrash{i})
			}
			return nil
		}
	})
	t.Fatalf("apply finished (%v) instead of crashing at step %d", err, i+1)
}

// settled is a snapshot without the record's own file (its time and
// generation differ from run to run).
func (e *env) settled(t *testing.T, f *applytest.Fixture) hostState {
	s := e.snapshot(t, f)
	delete(s.Files, record.Path)
	return s
}

// TestCrashAtEveryStep kills an apply at each of its steps in turn, on a
// fresh host, during an update and during a change of partitioning (a
// partition renamed), and checks that every command still
// works afterwards: status sees an interrupted apply, the next apply
// converges to exactly what an uninterrupted one leaves, and remove then
// leaves the host as it was before anything was applied. Each on this
// host's cgroup layout (hybrid here: cpuset v1 groups, attach steps) and
// on the unified code path (slices' CPUs set live only).
func TestCrashAtEveryStep(t *testing.T) {
	for _, c := range []struct {
		kind string
		mode transaction.CgroupMode
	}{{"fresh", ""}, {"update", ""}, {"repartition", ""}, {"fresh", transaction.CgroupV2}, {"update", transaction.CgroupV2}, {"repartition", transaction.CgroupV2}} {
		kind := c.kind
		update := kind != "fresh"
		name := kind
		if c.mode != "" {
			name += "-" + string(c.mode)
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.mode = c.mode
			gen1, gen2 := applytest.NewFixture(2), applytest.NewFixture(2)
			changeEverything(gen2)
			if kind == "repartition" {
				gen2 = renamed(gen1, "tnode1", "talpha")
			}
			pristine, pristine1 := e.settled(t, gen2), e.settled(t, gen1)
			start := func() {
				_, err := Remove(context.Background(), e.opts())
				applytest.Must(t, err)
				if update {
					_, err := e.apply(t, gen1, nil)
					applytest.Must(t, err)
				}
			}
			start()
			_, err := e.apply(t, gen2, nil)
			applytest.Must(t, err)
			want := e.settled(t, gen2)
			start()
			dry, err := e.apply(t, gen2, func(o *Options) { o.DryRun = true })
			applytest.Must(t, err)
			for i := range dry.Steps {
				what := fmt.Sprintf("killed at step %d (%s)", i+1, dry.Steps[i])
				start()
				e.crashAt(t, gen2, i)
				st, err := status.Read(context.Background(), status.Options{Root: e.sb.Root, Sysfs: e.sysfs, Systemd: e.m})
				applytest.Must(t, err)
				if !strings.Contains(strings.Join(st.Problems, "\n"), "interrupted") {
					t.Errorf("%s: status does not say an apply was interrupted: %v", what, st.Problems)
				}
				if _, err := e.apply(t, gen2, nil); err != nil {
					t.Fatalf("%s: the next apply fails: %v", what, err)
				}
				if d := diffStates(want, e.settled(t, gen2)); len(d) > 0 {
					t.Fatalf("%s: the next apply does not converge:\n%s", what, strings.Join(d, "\n"))
				}
				if _, err := Remove(context.Background(), e.opts()); err != nil {
					t.Fatalf("%s: remove: %v", what, err)
				}
				if d := diffStates(pristine, e.settled(t, gen2)); len(d) > 0 {
					t.Fatalf("%s: remove after the recovered apply left:\n%s", what, strings.Join(d, "\n"))
				}
				if d := diffStates(pristine1, e.settled(t, gen1)); len(d) > 0 {
					t.Fatalf("%s: remove after the recovered apply left of generation 1:\n%s", what, strings.Join(d, "\n"))
				}
			}
		})
	}
}

// TestRemoveAfterCrash: remove alone, right after the kill, undoes
// whatever the killed apply did.
func TestRemoveAfterCrash(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	pristine := e.settled(t, f)
	dry, err := e.apply(t, f, func(o *Options) { o.DryRun = true })
	applytest.Must(t, err)
	for i := range dry.Steps {
		e.crashAt(t, f, i)
		if _, err := Remove(context.Background(), e.opts()); err != nil {
			t.Fatalf("killed at step %d (%s): remove: %v", i+1, dry.Steps[i], err)
		}
		if d := diffStates(pristine, e.settled(t, f)); len(d) > 0 {
			t.Fatalf("killed at step %d (%s): remove left:\n%s", i+1, dry.Steps[i], strings.Join(d, "\n"))
		}
	}
}

// renamed is f with partition from renamed to to: its slice and services
// are other units, the old ones are no longer planned.
func renamed(f *applytest.Fixture, from, to string) *applytest.Fixture {
	g := applytest.NewFixture(len(f.Plan.Partitions))
	swap := func(s string) string { return strings.ReplaceAll(s, from, to) }
	for i := range g.Bundle.Files {
		g.Bundle.Files[i].Path = swap(g.Bundle.Files[i].Path)
		g.Bundle.Files[i].Content = []byte(swap(string(g.Bundle.Files[i].Content)))
	}
	for i := range g.Bundle.Units {
		u := &g.Bundle.Units[i]
		u.Name, u.Partition = swap(u.Name), swap(u.Partition)
		for j := range u.Files {
			u.Files[j] = swap(u.Files[j])
		}
	}
	for i := range g.Plan.Partitions {
		p := &g.Plan.Partitions[i]
		p.Name, p.Slice = swap(p.Name), swap(p.Slice)
	}
	return g
}

// TestRepartitionForgetsTheOldSlice: a partition that is gone takes its
// slice's runtime CPU drop-ins and v1 groups with it, and remove then
// leaves nothing of either generation.
func TestRepartitionForgetsTheOldSlice(t *testing.T) {
	e := newEnv(t)
	gen1 := applytest.NewFixture(2)
	gen2 := renamed(gen1, "tnode1", "talpha")
	pristine1, pristine2 := e.settled(t, gen1), e.settled(t, gen2)
	_, err := e.apply(t, gen1, nil)
	applytest.Must(t, err)
	mode, err := transaction.DetectCgroupMode(e.sb.Root)
	applytest.Must(t, err)
	// What gen1 left of tnode1.slice besides its files.
	before := transaction.SliceLeftovers(e.sb.Root, mode, "tnode1.slice")
	if len(before) == 0 {
		t.Fatalf("gen1 left nothing of tnode1.slice to forget (%s host): the test tests nothing", mode)
	}
	rep, err := e.apply(t, gen2, nil)
	applytest.Must(t, err)
	if !strings.Contains(strings.Join(rep.Steps, "\n"), "forget-slice tnode1.slice") {
		t.Errorf("no forget-slice step for tnode1.slice (it had %d leftovers): %v", len(before), rep.Steps)
	}
	if left := transaction.SliceLeftovers(e.sb.Root, mode, "tnode1.slice"); len(left) > 0 {
		t.Errorf("after repartitioning, tnode1.slice still has: %v", left[0].What)
	}
	if _, err := Remove(context.Background(), e.opts()); err != nil {
		t.Fatal(err)
	}
	for _, unit := range []string{"tnode0.slice", "tnode1.slice", "talpha.slice"} {
		if left := transaction.SliceLeftovers(e.sb.Root, mode, unit); len(left) > 0 {
			t.Errorf("after remove, %s still has: %v", unit, left[0].What)
		}
	}
	for i, want := range []hostState{pristine1, pristine2} {
		if d := diffStates(want, e.settled(t, []*applytest.Fixture{gen1, gen2}[i])); len(d) > 0 {
			t.Errorf("remove left of generation %d:\n%s", i+1, strings.Join(d, "\n"))
		}
	}
}

// remove --dry-run lists what remove would do and changes nothing.
func TestRemoveDryRun(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	before := e.snapshot(t, f)
	o := e.opts()
	o.DryRun = true
	rep, err := Remove(context.Background(), o)
	applytest.Must(t, err)
	if !rep.DryRun || rep.Generation != 1 {
		t.Fatalf("report: %+v", rep)
	}
	list := strings.Join(rep.Actions, "\n")
	for _, want := range []string{"stop kubelet-tnode1.service", "disable containerd-tnode0.service", "delete /etc/systemd/system/tnode0.slice", "daemon-reload", "delete the record"} {
		if !strings.Contains(list, want) {
			t.Errorf("dry run does not list %q:\n%s", want, list)
		}
	}
	if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
		t.Fatalf("a dry run changed the host:\n%s", strings.Join(d, "\n"))
	}
}
