package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/systemd/systemdtest"
)

// TestFaultAtEveryStep fails an apply at each of its steps in turn, on a
// fresh host and on an update of an applied generation, and checks each
// time that the error names the step and that files, unit states, slice
// properties and hugepages are exactly as before.
func TestFaultAtEveryStep(t *testing.T) {
	for _, update := range []bool{false, true} {
		t.Run(map[bool]string{false: "fresh", true: "update"}[update], func(t *testing.T) {
			e := newEnv(t)
			f := applytest.NewFixture(2)
			if update {
				_, err := e.apply(t, f, nil)
				applytest.Must(t, err)
				changeEverything(f)
			}
			before := e.snapshot(t, f)
			dry, err := e.apply(t, f, func(o *Options) { o.DryRun = true })
			applytest.Must(t, err)
			n := len(dry.Steps)
			if n < 10 {
				t.Fatalf("only %d steps planned: %v", n, dry.Steps)
			}
			for i := range n {
				injected := fmt.Errorf("fault at step %d", i+1)
				_, err := e.apply(t, f, func(o *Options) {
					o.BeforeStep = func(j int, s transaction.Step) error {
						if j == i {
							return injected
						}
						return nil
					}
				})
				var se *transaction.StepError
				if !errors.As(err, &se) || se.Index != i || !errors.Is(err, injected) || se.Rollback != nil {
					t.Fatalf("fault at step %d (%s): err = %v; want a StepError at that step with a complete rollback", i+1, dry.Steps[i], err)
				}
				if !strings.Contains(err.Error(), dry.Steps[i]) {
					t.Errorf("error %q does not name the step %q", err, dry.Steps[i])
				}
				if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
					t.Fatalf("fault at step %d (%s) left the host changed:\n%s", i+1, dry.Steps[i], strings.Join(d, "\n"))
				}
			}
			// And the same apply without faults still works afterwards.
			_, err = e.apply(t, f, nil)
			applytest.Must(t, err)
		})
	}
}

// TestSystemdFaultAtEveryCall fails each systemd call of an update in turn,
// through the fault-injecting Manager: before the call, and after it (the
// job ran but its result was lost).
func TestSystemdFaultAtEveryCall(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	changeEverything(f)
	// Count the update's systemd calls with a fault that never fires.
	counting := &systemdtest.Faulty{Manager: e.m, FailAt: -1}
	_, err = e.apply(t, f, func(o *Options) { o.Systemd = counting })
	applytest.Must(t, err)
	calls := counting.Calls
	if len(calls) < 8 {
		t.Fatalf("only %d systemd calls: %v", len(calls), calls)
	}
	// Back to generation 1 of the unchanged fixture.
	_, err = Remove(context.Background(), e.opts())
	applytest.Must(t, err)
	_, err = e.apply(t, applytest.NewFixture(2), nil)
	applytest.Must(t, err)
	before := e.snapshot(t, f)
	for _, after := range []bool{false, true} {
		for k := 1; k <= len(calls); k++ {
			fm := &systemdtest.Faulty{Manager: e.m, FailAt: k, After: after}
			_, err := e.apply(t, f, func(o *Options) { o.Systemd = fm })
			var se *transaction.StepError
			if !errors.As(err, &se) || !errors.Is(err, systemdtest.ErrInjected) || se.Rollback != nil {
				t.Fatalf("fault at call %d (%s, after=%v): err = %v; want a StepError with a complete rollback", k, calls[k-1], after, err)
			}
			if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
				t.Fatalf("fault at call %d (%s, after=%v) left the host changed:\n%s", k, calls[k-1], after, strings.Join(d, "\n"))
			}
		}
	}
}

// changeEverything edits every kind of file of the fixture: slice CPUs,
// services, and it drops the last partition's units and adds a file.
func changeEverything(f *applytest.Fixture) {
	f.SetSliceCPUs("tnode0", "0-1")
	for _, n := range []string{"kubelet-tnode0.service", "containerd-tnode1.service", "tnuma-hugepages.service"} {
		k := f.File(n)
		k.Content = append(k.Content, []byte("# generation 2\n")...)
	}
	f.Plan.Partitions[0].Memory[0].Hugepages[0].Count = 7
}

// TestUnitFailureRollsBack: a kubelet that fails to start and one whose
// start job times out roll everything back and name the unit.
func TestUnitFailureRollsBack(t *testing.T) {
	for _, tc := range []struct {
		name, service, want string
	}{
		{"fails", "[Service]\nSlice=tnode1.slice\nExecStartPre=/bin/false\nExecStart=/bin/sleep infinity\n", "start kubelet-tnode1.service: job failed"},
		{"times out", "[Service]\nType=oneshot\nSlice=tnode1.slice\nExecStart=/bin/sleep 600\n", "start kubelet-tnode1.service: job no result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.m.JobTimeout = 2 * time.Second
			f := applytest.NewFixture(2)
			_, err := e.apply(t, f, nil)
			applytest.Must(t, err)
			// Generation 2 replaces a running kubelet with a broken one.
			before := e.snapshot(t, f)
			k := f.File("kubelet-tnode1.service")
			k.Content = []byte("[Unit]\nDescription=broken kubelet\n" + tc.service + "[Install]\nWantedBy=multi-user.target\n")
			_, err = e.apply(t, f, nil)
			if err == nil || !strings.Contains(err.Error(), strings.Replace(tc.want, "start", "restart", 1)) {
				t.Fatalf("err = %v; want it to say %q", err, tc.want)
			}
			if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
				t.Fatalf("rollback incomplete:\n%s", strings.Join(d, "\n"))
			}
			// A fresh host: the failing unit is new, rollback removes everything.
			_, err = Remove(context.Background(), e.opts())
			applytest.Must(t, err)
			empty := e.snapshot(t, f)
			_, err = e.apply(t, f, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want it to say %q", err, tc.want)
			}
			if d := diffStates(empty, e.snapshot(t, f)); len(d) > 0 {
				t.Fatalf("rollback on a fresh host incomplete:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

// TestConcurrentApplyIsRefused: the loser names the holder.
func TestConcurrentApplyIsRefused(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(1)
	l, err := AcquireLock(e.sb.Root)
	applytest.Must(t, err)
	_, err = e.apply(t, f, nil)
	var le *LockedError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("apply under a held lock: %v; want a LockedError naming pid %d", err, os.Getpid())
	}
	_, err = Remove(context.Background(), e.opts())
	if !errors.As(err, &le) {
		t.Fatalf("remove under a held lock: %v; want a LockedError", err)
	}
	applytest.Must(t, l.Release())
	_, err = e.apply(t, f, nil)
	applytest.Must(t, err)
}

// TestPortInUseRefused: a planned port taken by another process stops
// apply before it touches anything; our own kubelet holding it does not.
func TestPortInUseRefused(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(1)
	ctx := context.Background()
	squat := "etc/systemd/system/tsquatter.service"
	applytest.Must(t, os.WriteFile(e.sb.Path(squat), []byte("[Service]\n"+fakeKubeletExec(20248)+"\n"), 0o644))
	t.Cleanup(func() {
		_ = e.m.StopUnit(ctx, "tsquatter.service")
		os.Remove(e.sb.Path(squat))
		_ = e.m.Reload(ctx)
	})
	applytest.Must(t, e.m.Reload(ctx))
	applytest.Must(t, e.m.StartUnit(ctx, "tsquatter.service"))
	before := e.snapshot(t, f)
	var err error
	for range 50 { // the squatter needs a moment to listen
		_, err = e.apply(t, f, nil)
		if err != nil {
			break
		}
		_, _ = Remove(ctx, e.opts())
		time.Sleep(100 * time.Millisecond)
	}
	var pe *PortInUseError
	if !errors.As(err, &pe) || pe.Port.Port != 20248 || pe.Unit != "tsquatter.service" {
		t.Fatalf("apply with a taken port: %v; want a PortInUseError for 20248 held by tsquatter.service", err)
	}
	t.Log(err)
	if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
		t.Fatalf("apply touched the host before refusing:\n%s", strings.Join(d, "\n"))
	}
}
