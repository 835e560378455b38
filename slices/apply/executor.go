package apply

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

	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// Executor runs Plan's steps against a host and undoes them on failure.
type Executor struct {
	Root    string // the host's root, "/" in production
	Sysfs   string // the sysfs holding the hugepage pools, "/sys" in production
	Systemd systemd.Manager
	// Record is written by the record step.
	Record *Record
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

// undo is one journal entry. File-level entries are undone first, then
// systemd is reloaded, then the unit-level entries (which need the old
// unit files loaded).
type undo struct {
	files bool
	what  string
	run   func(ctx context.Context) error
}

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
		if err == nil {
			var u []undo
			u, err = e.do(ctx, s, cur, res)
			// Undo entries are kept even for the failing step: a job
			// that timed out may still have run.
			journal = append(journal, u...)
		}
		if s.Kind == KindReload {
			reloaded = true
		}
		if err != nil {
			log.Error("apply step failed, rolling back", "step", s.String(), "err", err)
			rb := e.rollback(journal, reloaded)
			return nil, &StepError{Index: i, Total: len(steps), Step: s, Err: err, Rollback: rb}
		}
	}
	res.Duration = time.Since(t0)
	return res, nil
}

// rollback runs the journal backwards with a fresh context (the caller's
// may be what failed).
func (e *Executor) rollback(journal []undo, reloaded bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var errs []error
	files := 0
	for i := len(journal) - 1; i >= 0; i-- {
		if j := journal[i]; j.files {
			files++
			if err := j.run(ctx); err != nil {
				errs = append(errs, fmt.Errorf("undo %s: %w", j.what, err))
			}
		}
	}
	if files > 0 || reloaded {
		if err := e.Systemd.Reload(ctx); err != nil {
			errs = append(errs, fmt.Errorf("undo: %w", err))
		}
	}
	for i := len(journal) - 1; i >= 0; i-- {
		if j := journal[i]; !j.files {
			if err := j.run(ctx); err != nil {
				errs = append(errs, fmt.Errorf("undo %s: %w", j.what, err))
			}
		}
	}
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
// restarted (with the restored files), one that was not is stopped and its
// failed state cleared.
func (e *Executor) restoreActive(unit string, before systemd.UnitInfo) undo {
	return undo{what: "state of " + unit, run: func(ctx context.Context) error {
		if before.Active() {
			return e.Systemd.RestartUnit(ctx, unit)
		}
		err := e.Systemd.StopUnit(ctx, unit)
		_ = e.Systemd.ResetFailed(ctx, unit) // not loaded or not failed: nothing to clear
		return err
	}}
}

// missingDirs lists the directories from rel up to the root that do not
// exist yet, deepest first.
func missingDirs(root, rel string) []string {
	var dirs []string
	for d := rel; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if exists(root, d) {
			break
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// removeEmptyDirs removes directories apply created, deepest first, when
// they are empty (a directory someone else put files in stays).
func removeEmptyDirs(root string, dirs []string) error {
	sorted := slices.Clone(dirs)
	slices.SortFunc(sorted, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range sorted {
		err := rootOf(root).Remove(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			return err
		}
	}
	return nil
}

func appendNew(list []string, items ...string) []string {
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
	if exists(e.Root, keep) {
		return nil, nil // the first original wins
	}
	created := missingDirs(e.Root, path.Dir(keep))
	if e.Record != nil {
		e.Record.Dirs = appendNew(e.Record.Dirs, created...)
	}
	u := undo{files: true, what: "keep the original of /" + rel, run: func(context.Context) error {
		if err := removeFile(e.Root, keep); err != nil {
			return err
		}
		return removeEmptyDirs(e.Root, created)
	}}
	if err := writeFileAtomic(e.Root, keep, old.Content, old.Mode); err != nil {
		return []undo{u}, fmt.Errorf("keeping the original of /%s: %w", rel, err)
	}
	return []undo{u}, nil
}

// removeOwned deletes a file apply wrote, or puts back the original it
// replaced; f is its record entry. A file that is no longer what apply
// wrote there is neither deleted nor written over (#38: a unit the admin
// edited after apply was deleted): a *KeptError.
func (e *Executor) removeOwned(f RecordFile) error {
	rel, p := f.Path, e.path(f.Path)
	kept, err := keptReason(e.Root, f)
	if err != nil {
		return err
	}
	if kept != "" {
		return &KeptError{Path: p, Reason: kept}
	}
	if f.Original {
		orig := path.Join(OriginalsDir, rel)
		st, ok, err := readFileState(e.Root, orig)
		if err != nil {
			return err
		}
		if ok {
			if err := writeFileAtomic(e.Root, rel, st.Content, st.Mode); err != nil {
				return fmt.Errorf("restoring the original of %s: %w", p, err)
			}
			return removeFile(e.Root, orig)
		}
	}
	if err := removeFile(e.Root, rel); err != nil {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	return nil
}

// keptReason says why the file of record entry f must be kept rather
// than deleted or restored over: "" when it is what apply wrote (its
// content's sha256 the record's, RecordFile.wrote), the original apply
// kept of it (an apply killed between keeping and replacing it), or is
// gone. An edit after apply, or a link, FIFO or device put at its path,
// is not apply's to take away.
func keptReason(root string, f RecordFile) (string, error) {
	b, err := rootOf(root).ReadFile(f.Path, maxHostFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case isReplaced(err):
		return fmt.Sprintf("replaced after apply (%v)", err), nil
	case err != nil:
		return "", fmt.Errorf("reading /%s to check it is what apply wrote: %w", f.Path, err)
	case f.wrote(b):
		return "", nil
	}
	if f.Original {
		orig, ok, err := readFileState(root, path.Join(OriginalsDir, f.Path))
		if err != nil {
			return "", err
		}
		if ok && bytes.Equal(orig.Content, b) {
			return "", nil
		}
	}
	return fmt.Sprintf("changed after apply (its sha256 is %s, apply wrote %s)", hashOf(b), f.SHA256), nil
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
