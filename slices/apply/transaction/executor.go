package transaction

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// Executor runs Plan's steps against a host and undoes them on failure.
type Executor struct {
	Root    string // the host's root, "/" in production
	Sysfs   string // the sysfs holding the hugepage pools, "/sys" in production
	Systemd systemd.Manager
	// Record is written by the record step.
	Record *record.Record
	// BeforeStep, when set, runs before each step and fails it by
	// returning an error: the fault injection of the tests.
	BeforeStep func(i int, s Step) error
	PoolWriter hugepool.Writer // nil: hugepool.Write
	Log        *slog.Logger
}

// Result is what a successful run did.
type Result struct {
	Steps      []Step      `json:"steps"`
	Shortfalls []Shortfall `json:"hugepageShortfalls,omitempty"`
	Duration   time.Duration
}

// StepError is a failed transaction: which step failed, why, and how the
// rollback went.
type StepError struct {
	Index, Total int
	Step         Step
	Err          error
	// Rollback is nil when the host was restored.
	Rollback error
}

func (e *StepError) Error() string {
	msg := fmt.Sprintf("step %d/%d, %s: %v", e.Index+1, e.Total, e.Step, e.Err)
	if e.Rollback != nil {
		return msg + "; ROLLBACK INCOMPLETE, the host needs attention: " + e.Rollback.Error()
	}
	return msg + "; rolled back: previous files and unit states restored"
}

func (e *StepError) Unwrap() error { return e.Err }

// undo is one journal entry; phase says when a rollback runs it.
type undo struct {
	phase undoPhase
	what  string
	run   func(ctx context.Context) error
}

// undoPhase orders a rollback: stops first, then the file-level entries,
// then one daemon-reload, then the unit-level entries (which need the old
// unit files loaded). Within a phase the journal runs backwards.
type undoPhase int

const (
	// phaseUnits (the zero value): restarts, live properties, pools.
	phaseUnits undoPhase = iota
	// phaseStop stops the units this apply started, while the files it
	// wrote are still loaded: systemd runs the ExecStop= of the file it
	// loaded, and a unit whose file went before the reload has none. The
	// uplink stopped after its file went left its bridge and forwarding
	// on the host (#38).
	phaseStop
	// phaseFiles: files, directories, enable and disable.
	phaseFiles
)

// Run executes steps in order. cur is what Gather read before planning:
// the undo journal restores it.
func (e *Executor) Run(ctx context.Context, steps []Step, cur Current) (*Result, error) {
	t0 := time.Now()
	log := e.Log
	if log == nil {
		log = slog.Default()
	}
	res := &Result{Steps: steps}
	var journal []undo
	reloaded := false
	for i, s := range steps {
		// Progress on stderr: one line per step, as it starts.
		log.Info("apply step", "index", i+1, "of", len(steps), "step", s.String())
		var err error
		if e.BeforeStep != nil {
			err = e.BeforeStep(i, s)
		}
		notRun := i // the first step without undo entries
		if err == nil {
			var u []undo
			u, err = s.run(e, ctx, cur, res)
			// Undo entries are kept even for the failing step: a job
			// that timed out may still have run.
			journal = append(journal, u...)
			notRun = i + 1
		}
		if s.Kind() == KindReload {
			reloaded = true
		}
		if err != nil {
			log.Error("apply step failed, rolling back", "step", s.String(), "err", err)
			journal = append(journal, e.pulledIn(steps[notRun:], cur)...)
			rb := e.rollback(journal, reloaded)
			return nil, &StepError{Index: i, Total: len(steps), Step: s, Err: err, Rollback: rb}
		}
	}
	res.Duration = time.Since(t0)
	return res, nil
}

// pulledIn undoes the starts a rollback has no entry for: a start job
// starts what its unit Requires= or Wants= too, before the step that
// starts that unit ran, if it ever did (#38: netns-node0's start pulled
// in the uplink, whose bridge and forwarding a rollback that stopped
// only netns-node0 left). rest are the steps that did not run; every
// unit they start that was not active before is stopped.
func (e *Executor) pulledIn(rest []Step, cur Current) []undo {
	var undos []undo
	for _, s := range rest {
		if unit, ok := s.StartedUnit(); ok && !cur.Units[unit].Active() {
			undos = append(undos, e.restoreActive(unit, cur.Units[unit]))
		}
	}
	return undos
}

// rollback runs the journal backwards, phase by phase (undoPhase), with a
// fresh context (the caller's may be what failed). An undo that fails does
// not stop the others: every error is returned.
func (e *Executor) rollback(journal []undo, reloaded bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var errs []error
	run := func(p undoPhase) (n int) {
		for i := len(journal) - 1; i >= 0; i-- {
			if j := journal[i]; j.phase == p {
				n++
				if err := j.run(ctx); err != nil {
					errs = append(errs, fmt.Errorf("undo %s: %w", j.what, err))
				}
			}
		}
		return n
	}
	run(phaseStop)
	if files := run(phaseFiles); files > 0 || reloaded {
		if err := e.Systemd.Reload(ctx); err != nil {
			errs = append(errs, fmt.Errorf("undo: %w", err))
		}
	}
	run(phaseUnits)
	return errors.Join(errs...)
}

func (e *Executor) path(rel string) string { return filepath.Join(e.Root, rel) }

func (e *Executor) poolWriter() hugepool.Writer {
	if e.PoolWriter == nil {
		return hugepool.Write
	}
	return e.PoolWriter
}

func (e *Executor) logger() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.Default()
}

// restoreActive undoes a start, restart or stop: a unit that was active is
// restarted (with the restored files), one that was not is stopped (before
// its files are restored: phaseStop) and its failed state cleared.
func (e *Executor) restoreActive(unit string, before systemd.UnitInfo) undo {
	if before.Active() {
		return undo{what: "state of " + unit, run: func(ctx context.Context) error {
			return e.Systemd.RestartUnit(ctx, unit)
		}}
	}
	return undo{phase: phaseStop, what: "state of " + unit, run: func(ctx context.Context) error {
		err := settled(ctx, e.Systemd, unit, e.Systemd.StopUnit(ctx, unit), func(u systemd.UnitInfo) bool { return u.ActiveState == "inactive" })
		_ = e.Systemd.ResetFailed(ctx, unit) // not loaded or not failed: nothing to clear
		return err
	}}
}

// settled is err, the failure of an undo's call on unit, unless the unit
// is already as the undo leaves it (done): then there is nothing left to
// undo. systemd refuses to stop a unit it has unloaded ("Unit … not
// loaded"), which a rollback met once a failed start left the unit
// inactive, and gave up there (#38).
func settled(ctx context.Context, m systemd.Manager, unit string, err error, done func(systemd.UnitInfo) bool) error {
	if err == nil {
		return nil
	}
	if u, rerr := m.Unit(ctx, unit); rerr == nil && done(u) {
		return nil
	}
	return err
}

// missingDirs lists the directories from rel up to the root that do not
// exist yet, deepest first.
func missingDirs(root, rel string) []string {
	var dirs []string
	for d := rel; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if host.Exists(root, d) {
			break
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// RemoveEmptyDirs removes directories apply created, deepest first, when
// they are empty (a directory someone else put files in stays).
func RemoveEmptyDirs(root string, dirs []string) error {
	sorted := slices.Clone(dirs)
	slices.SortFunc(sorted, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range sorted {
		err := host.Root(root).Remove(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			return err
		}
	}
	return nil
}

// AppendNew appends the items list does not hold yet.
func AppendNew(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// keepOriginal saves a file numa-partition did not write before it is
// first replaced, for remove; undone, the copy goes again.
func (e *Executor) keepOriginal(rel string, old FileState) ([]undo, error) {
	keep := path.Join(OriginalsDir, rel)
	if host.Exists(e.Root, keep) {
		return nil, nil // the first original wins
	}
	created := missingDirs(e.Root, path.Dir(keep))
	if e.Record != nil {
		e.Record.Dirs = AppendNew(e.Record.Dirs, created...)
	}
	u := undo{phase: phaseFiles, what: "keep the original of /" + rel, run: func(context.Context) error {
		if err := host.RemoveFile(e.Root, keep); err != nil {
			return err
		}
		return RemoveEmptyDirs(e.Root, created)
	}}
	if err := host.WriteFileAtomic(e.Root, keep, old.Content, old.Mode); err != nil {
		return []undo{u}, fmt.Errorf("keeping the original of /%s: %w", rel, err)
	}
	return []undo{u}, nil
}

// RemoveOwned deletes a file apply wrote, or puts back the original it
// replaced; f is its record entry. A file that is no longer what apply
// wrote there is neither deleted nor written over (#38: a unit the admin
// edited after apply was deleted): a *KeptError.
func (e *Executor) RemoveOwned(f record.File) error {
	rel, p := f.Path, e.path(f.Path)
	kept, err := KeptReason(e.Root, f)
	if err != nil {
		return err
	}
	if kept != "" {
		return &KeptError{Path: p, Reason: kept}
	}
	if f.Original {
		orig := path.Join(OriginalsDir, rel)
		st, ok, err := host.ReadFileState(e.Root, orig)
		if err != nil {
			return err
		}
		if ok {
			if err := host.WriteFileAtomic(e.Root, rel, st.Content, st.Mode); err != nil {
				return fmt.Errorf("restoring the original of %s: %w", p, err)
			}
			return host.RemoveFile(e.Root, orig)
		}
	}
	if err := host.RemoveFile(e.Root, rel); err != nil {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	return nil
}

// KeptReason says why the file of record entry f must be kept rather
// than deleted or restored over: "" when it is what apply wrote (its
// content's sha256 the record's, record.File.Wrote), the original apply
// kept of it (an apply killed between keeping and replacing it), or is
// gone. An edit after apply, or a link, FIFO or device put at its path,
// is not apply's to take away.
func KeptReason(root string, f record.File) (string, error) {
	b, err := host.ReadFile(root, f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case host.IsReplaced(err):
		return fmt.Sprintf("replaced after apply (%v)", err), nil
	case err != nil:
		return "", fmt.Errorf("reading /%s to check it is what apply wrote: %w", f.Path, err)
	case f.Wrote(b):
		return "", nil
	}
	if f.Original {
		orig, ok, err := host.ReadFileState(root, path.Join(OriginalsDir, f.Path))
		if err != nil {
			return "", err
		}
		if ok && bytes.Equal(orig.Content, b) {
			return "", nil
		}
	}
	return fmt.Sprintf("changed after apply (its sha256 is %s, apply wrote %s)", record.Hash(b), f.SHA256), nil
}

// KeptError is a file apply or remove would delete (or put an original
// back over) that is no longer what apply wrote: it is kept.
type KeptError struct {
	Path   string
	Reason string
}

func (e *KeptError) Error() string {
	return fmt.Sprintf("%s was %s: kept, since deleting it would lose what is there; move it away (or put back what apply wrote) for apply or remove to take it", e.Path, e.Reason)
}

// writeOwn writes one of apply's own files at rel, not a bundle file (the
// record, a kubelet's settings stamp): the directories it makes are
// recorded first, then content is computed and written; the undo puts
// back what was there, or removes the file and those directories.
func (e *Executor) writeOwn(rel, what string, content func() ([]byte, error)) ([]undo, error) {
	old, existed, err := host.ReadFileState(e.Root, rel)
	if err != nil {
		return nil, err
	}
	created := missingDirs(e.Root, path.Dir(rel))
	e.Record.Dirs = AppendNew(e.Record.Dirs, created...)
	u := undo{phase: phaseFiles, what: what, run: func(context.Context) error {
		if existed {
			return host.WriteFileAtomic(e.Root, rel, old.Content, old.Mode)
		}
		if err := host.RemoveFile(e.Root, rel); err != nil {
			return err
		}
		return RemoveEmptyDirs(e.Root, created)
	}}
	b, err := content()
	if err != nil {
		return nil, err
	}
	return []undo{u}, host.WriteFileAtomic(e.Root, rel, b, 0o644)
}

// unitJob runs a start, stop or restart of unit; the undo restores
// whether the unit ran.
func (e *Executor) unitJob(ctx context.Context, job func(systemd.Manager, context.Context, string) error, unit string, cur Current) ([]undo, error) {
	return []undo{e.restoreActive(unit, cur.Units[unit])}, job(e.Systemd, ctx, unit)
}

// unitFileJob enables or disables unit (do); the undo runs back only
// when do changed something: when the unit's enabled state before was
// changedFrom (true for a disable, false for an enable). A unit already
// back in that state is done, whatever back answered (a unit file gone).
func (e *Executor) unitFileJob(ctx context.Context, what, unit string, cur Current, do, back func(systemd.Manager, context.Context, []string) error, changedFrom bool) ([]undo, error) {
	before := cur.Units[unit].Enabled()
	u := undo{phase: phaseFiles, what: what + " " + unit, run: func(ctx context.Context) error {
		if before != changedFrom {
			return nil
		}
		err := back(e.Systemd, ctx, []string{unit})
		return settled(ctx, e.Systemd, unit, err, func(u systemd.UnitInfo) bool { return u.Enabled() == changedFrom })
	}}
	return []undo{u}, do(e.Systemd, ctx, []string{unit})
}

// restoreFile is the undo of a write or remove of rel: it puts back what
// was there, or removes what was not.
func (e *Executor) restoreFile(kind Kind, rel string, cur Current) undo {
	old, existed := cur.Files[rel]
	return undo{phase: phaseFiles, what: string(kind) + " /" + rel, run: func(context.Context) error {
		if existed {
			return host.WriteFileAtomic(e.Root, rel, old.Content, old.Mode)
		}
		return host.RemoveFile(e.Root, rel)
	}}
}
