package apply

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// errCrash is the panic that stands for a kill -9 in the middle of an
// apply: it leaves through BeforeStep, so no rollback runs and the host is
// as the killed process left it.
type errCrash struct{ step int }

// crashAt applies f and "kills" the apply before step i.
func (e *env) crashAt(t *testing.T, f *fixture, i int) {
	t.Helper()
	defer func() {
		r := recover()
		if c, ok := r.(errCrash); !ok || c.step != i {
			t.Fatalf("apply did not crash at step %d: %v", i+1, r)
		}
	}()
	_, err := e.apply(t, f, func(o *Options) {
		o.BeforeStep = func(j int, s Step) error {
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
func (e *env) settled(t *testing.T, f *fixture) hostState {
	s := e.snapshot(t, f)
	delete(s.Files, RecordPath)
	return s
}

// TestCrashAtEveryStep kills an apply at each of its steps in turn, on a
// fresh host and during an update, and checks that every command still
// works afterwards: status sees an interrupted apply, the next apply
// converges to exactly what an uninterrupted one leaves, and remove then
// leaves the host as it was before anything was applied.
func TestCrashAtEveryStep(t *testing.T) {
	for _, update := range []bool{false, true} {
		t.Run(map[bool]string{false: "fresh", true: "update"}[update], func(t *testing.T) {
			e := newEnv(t)
			gen1, gen2 := newFixture(2), newFixture(2)
			changeEverything(gen2)
			pristine := e.settled(t, gen2)
			start := func() {
				_, err := Remove(context.Background(), e.opts())
				must(t, err)
				if update {
					_, err := e.apply(t, gen1, nil)
					must(t, err)
				}
			}
			start()
			_, err := e.apply(t, gen2, nil)
			must(t, err)
			want := e.settled(t, gen2)
			start()
			dry, err := e.apply(t, gen2, func(o *Options) { o.DryRun = true })
			must(t, err)
			for i := range dry.Steps {
				what := fmt.Sprintf("killed at step %d (%s)", i+1, dry.Steps[i])
				start()
				e.crashAt(t, gen2, i)
				st, err := ReadStatus(context.Background(), StatusOptions{Root: e.sb.Root, Sysfs: e.sysfs, Systemd: e.m})
				must(t, err)
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
			}
		})
	}
}

// TestRemoveAfterCrash: remove alone, right after the kill, undoes
// whatever the killed apply did.
func TestRemoveAfterCrash(t *testing.T) {
	e := newEnv(t)
	f := newFixture(2)
	pristine := e.settled(t, f)
	dry, err := e.apply(t, f, func(o *Options) { o.DryRun = true })
	must(t, err)
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
