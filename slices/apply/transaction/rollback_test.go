package transaction

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/systemd"
	"github.com/numa-partition/numa-partition/slices/systemd/systemdtest"
)

// unitsFake is a systemd that knows unit states only, as systemd answers
// a rollback: a start may pull in other units (pulls), a stop of an
// inactive unit whose file is gone is refused as "not loaded", and each
// stop notes whether the unit's file was still there (its ExecStop= runs
// from the file systemd loaded).
type unitsFake struct {
	systemd.Manager
	root   string
	active map[string]bool
	pulls  map[string]string // unit → the unit its start starts first
	fails  map[string]bool   // units whose start job fails
	calls  []string
}

func (f *unitsFake) file(unit string) string {
	return filepath.Join(f.root, "etc/systemd/system", unit)
}

func (f *unitsFake) StartUnit(_ context.Context, u string) error {
	f.calls = append(f.calls, "start "+u)
	if dep := f.pulls[u]; dep != "" {
		f.active[dep] = true
	}
	if f.fails[u] {
		return fmt.Errorf("start %s: job failed", u)
	}
	f.active[u] = true
	return nil
}

func (f *unitsFake) StopUnit(_ context.Context, u string) error {
	_, err := os.Stat(f.file(u))
	f.calls = append(f.calls, fmt.Sprintf("stop %s (file there: %v)", u, err == nil))
	if !f.active[u] && err != nil {
		return fmt.Errorf("stop %s: Unit %s not loaded.", u, u)
	}
	f.active[u] = false
	return nil
}

func (f *unitsFake) Unit(_ context.Context, u string) (systemd.UnitInfo, error) {
	st := "inactive"
	if f.active[u] {
		st = "active"
	}
	return systemd.UnitInfo{Name: u, ActiveState: st}, nil
}

func (f *unitsFake) Reload(context.Context) error                    { f.calls = append(f.calls, "reload"); return nil }
func (f *unitsFake) ResetFailed(context.Context, string) error       { return nil }
func (f *unitsFake) EnableUnitFiles(context.Context, []string) error { return nil }

// networkSteps are a fresh apply of an uplink and a partition namespace
// that requires it, the namespace's start first (as Plan orders them).
func networkSteps() []Step {
	var steps []Step
	for _, u := range []string{"netns-node0.service", "numa-partition-network.service", "mountns-node0.service"} {
		steps = append(steps, Step{Action: WriteFile{Path: "etc/systemd/system/" + u, Content: []byte("[Service]\n"), Mode: 0o644}})
	}
	steps = append(steps, Step{Action: DaemonReload{}})
	for _, u := range []string{"netns-node0.service", "numa-partition-network.service", "mountns-node0.service"} {
		steps = append(steps, Step{Action: StartUnit{Unit: u}})
	}
	return steps
}

// TestRollbackStopsPulledInUnitsWhileTheirFilesAreThere is #38 item 4 on
// the executor alone: netns-node0's start pulls in the uplink and fails.
// The rollback stops the uplink, which no step of its own started, and
// stops it before its file goes (else systemd has no ExecStop= to run
// and the bridge stays); mountns-node0, never started and with its file
// gone, is "not loaded", which is done, not a failed undo.
func TestRollbackStopsPulledInUnitsWhileTheirFilesAreThere(t *testing.T) {
	root := t.TempDir()
	f := &unitsFake{root: root, active: map[string]bool{}, fails: map[string]bool{"netns-node0.service": true},
		pulls: map[string]string{"netns-node0.service": "numa-partition-network.service"}}
	ex := &Executor{Root: root, Systemd: f, Record: &record.Record{}}
	cur := Current{Units: map[string]systemd.UnitInfo{}, Files: map[string]FileState{}}
	_, err := ex.Run(context.Background(), networkSteps(), cur)
	var se *StepError
	if !errors.As(err, &se) || se.Rollback != nil {
		t.Fatalf("Run: %v; want a failed start of netns-node0 with a complete rollback", err)
	}
	if f.active["numa-partition-network.service"] {
		t.Errorf("the uplink the failed start pulled in is still active; calls: %q", f.calls)
	}
	stop := slices.Index(f.calls, "stop numa-partition-network.service (file there: true)")
	reload := slices.Index(f.calls[stop+1:], "reload")
	if stop < 0 || reload < 0 {
		t.Errorf("the uplink was not stopped before its file went and systemd reloaded: %q", f.calls)
	}
	if _, err := os.Stat(f.file("numa-partition-network.service")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the uplink's file is still there after the rollback: %v", err)
	}
	// A stop answered "not loaded" once the file is gone is done too.
	f.calls = nil
	u := ex.restoreActive("mountns-node0.service", systemd.UnitInfo{ActiveState: "inactive"})
	if err := u.run(context.Background()); err != nil || len(f.calls) != 1 || !strings.Contains(f.calls[0], "file there: false") {
		t.Errorf("undo of a start of a unit systemd no longer has: %v (calls %q); want done", err, f.calls)
	}
}

// TestRollbackCarriesOnPastAFailedUndo: an undo that fails (the uplink's
// stop, through the fault-injecting Manager) is reported, and every other
// undo still runs: the files go, the namespace's unit is stopped.
func TestRollbackCarriesOnPastAFailedUndo(t *testing.T) {
	root := t.TempDir()
	f := &unitsFake{root: root, active: map[string]bool{}, fails: map[string]bool{"mountns-node0.service": true}}
	// Calls: reload 1, start ×3 (2–4), then the rollback stops mountns
	// (5), the uplink (6), netns (7).
	fm := &systemdtest.Faulty{Manager: f, FailAt: 6}
	ex := &Executor{Root: root, Systemd: fm, Record: &record.Record{}}
	cur := Current{Units: map[string]systemd.UnitInfo{}, Files: map[string]FileState{}}
	_, err := ex.Run(context.Background(), networkSteps(), cur)
	var se *StepError
	if !errors.As(err, &se) || !errors.Is(se.Rollback, systemdtest.ErrInjected) || !strings.Contains(se.Rollback.Error(), "numa-partition-network.service") {
		t.Fatalf("Run: %v; want ROLLBACK INCOMPLETE naming the uplink's stop", err)
	}
	if fm.Calls[5] != "stop numa-partition-network.service" {
		t.Fatalf("call 6 is %q, not the uplink's stop: %q", fm.Calls[5], fm.Calls)
	}
	if f.active["netns-node0.service"] {
		t.Errorf("the rollback stopped at the failed undo: netns-node0 is still active; calls %q", fm.Calls)
	}
	for _, u := range []string{"netns-node0.service", "numa-partition-network.service", "mountns-node0.service"} {
		if _, err := os.Stat(f.file(u)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the rollback left %s: %v", f.file(u), err)
		}
	}
}
