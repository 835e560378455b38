package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// run does what prepare decided: it drains and changes the host, or in a
// dry run says what it would.
func (a *attempt) run(ctx context.Context, t0 time.Time) (*Report, error) {
	var err error
	switch {
	case a.o.DryRun && a.o.Offline:
		a.offlineDryRun()
	case a.o.DryRun:
		err = a.dryRun(ctx)
	case !a.rep.Changed:
		a.settleOnly(ctx)
	default:
		err = a.change(ctx)
	}
	if err != nil {
		return nil, err
	}
	a.rep.Seconds = time.Since(t0).Seconds()
	return a.rep, nil
}

// offlineDryRun reports the steps and the files' diff of a root no
// systemd runs on: no Node is asked about.
func (a *attempt) offlineDryRun() {
	a.rep.Offline = true
	a.rep.Warnings = append(a.rep.Warnings, offlineApplyWarning)
	a.rep.Diff = transaction.Diff(a.steps, a.cur)
}

// dryRun reports the steps, the files' diff and what the Nodes the steps
// disrupt hold, changing nothing.
func (a *attempt) dryRun(ctx context.Context) error {
	disrupted, warnings, err := nodes.Prepare(ctx, a.o.nodeCommand(), "apply", a.targets, nil)
	if err != nil {
		return err
	}
	disrupted.Close()
	a.rep.Warnings = append(a.rep.Warnings, warnings...)
	a.rep.Nodes = disrupted.Report()
	a.rep.Diff = transaction.Diff(a.steps, a.cur)
	return nil
}

// settleOnly changes nothing on the host, but lets go of the Nodes an
// interrupted drain left cordoned, once Ready.
func (a *attempt) settleOnly(ctx context.Context) {
	if a.prev != nil && len(a.prev.Cordoned) > 0 {
		a.rep.Warnings = append(a.rep.Warnings, nodes.SettleCordoned(ctx, a.o.nodeCommand(), a.prev, nil, nil, time.Time{}, true)...)
	}
}

// change drains what it must, then runs the steps under a record written
// ahead (writeAhead), and finishes or reports the rollback.
func (a *attempt) change(ctx context.Context) error {
	w := a.writeAhead()
	disrupted, err := a.drain(ctx, w)
	if err != nil {
		return err
	}
	defer disrupted.Close()
	// Steps without a record step (a crashed unit started again) change
	// nothing the record lists: the record on disk stays as it is, not
	// pending, unless the Nodes this apply cordoned had to go into it.
	if !w.written() && transaction.WritesRecord(a.steps) {
		if err := w.write(nil); err != nil {
			return err
		}
	}
	ex := &transaction.Executor{Root: a.o.Root, Sysfs: a.o.Sysfs, Systemd: a.o.Systemd, Record: w.rec, BeforeStep: a.o.BeforeStep, PoolWriter: a.o.PoolWriter, Log: a.o.Log}
	started := a.o.Now()
	res, err := ex.Run(ctx, a.steps, a.cur)
	changes := a.partitionChanges()
	if err != nil {
		return a.rolledBack(ctx, w, disrupted, changes, err)
	}
	return a.finish(ctx, w, disrupted, res, changes, started)
}

// drain prepares the Nodes the steps disrupt (with --drain: cordoned and
// drained, the record written ahead with them first) and waits for the
// drained kubelets to let go of their pods' state, then plans again from
// the host as it is. On an error nothing on the host changed.
func (a *attempt) drain(ctx context.Context, w *writeAhead) (*nodes.Run, error) {
	disrupted, warnings, err := nodes.Prepare(ctx, a.o.nodeCommand(), "apply", a.targets, w.write)
	if err != nil {
		err = errors.Join(err, w.restore())
		return nil, fmt.Errorf("apply refused before it changed anything on the host: %w", err)
	}
	a.rep.Warnings = append(a.rep.Warnings, warnings...)
	disrupted.Adopt(w.rec.Cordoned)
	if !a.o.Nodes.Drain || !slices.ContainsFunc(a.targets, func(t nodes.Target) bool { return !t.Goes() }) {
		return disrupted, nil
	}
	// The drained pods' entries count until kubelet has cleaned the pods
	// up; the steps move the state aside only after that.
	cur, err := waitKubeletsLetGo(ctx, a.o, a.d, a.cur)
	if err != nil {
		disrupted.ApplyFailed(ctx, nil, nil, "gave up before it changed the host: "+err.Error())
		err = fmt.Errorf("%w\n(nothing on the host was changed; %s)", err, disrupted.Undo(ctx))
		disrupted.Close()
		return nil, errors.Join(err, w.restore())
	}
	a.cur, a.steps = cur, transaction.Plan(a.d, cur)
	return disrupted, nil
}

// partitionChanges are what the steps change of each partition, for its
// Node's Event (the units of a partition that goes are only the
// record's).
func (a *attempt) partitionChanges() map[string][]string {
	var prior []bundle.Unit
	if a.prev != nil {
		prior = a.prev.Units
	}
	return partitionChanges(slices.Concat(a.d.Units, prior), a.steps)
}

// rolledBack reports steps the executor rolled back: the previous record
// is the truth again, and the Nodes this apply drained run their old
// kubelets.
func (a *attempt) rolledBack(ctx context.Context, w *writeAhead, disrupted *nodes.Run, changes map[string][]string, err error) error {
	disrupted.ApplyFailed(ctx, transaction.RecordPartitions(a.d), changes, fmt.Sprintf("generation %d failed and was rolled back: %v", w.rec.Generation, err))
	if uerr := disrupted.Uncordon(ctx, "the apply failed and was rolled back"); uerr != nil {
		err = errors.Join(err, fmt.Errorf("uncordoning the Nodes this apply cordoned: %w", uerr))
	}
	if se := (*transaction.StepError)(nil); errors.As(err, &se) && se.Rollback != nil && w.written() {
		// What the rollback could not undo is on the host: the pending
		// record keeps it listed, as after a kill, so that status names
		// it and apply or remove finish it (#38: the previous record put
		// back said nothing was applied, and remove found nothing to
		// remove beside the uplink's bridge).
		return fmt.Errorf("%w; the record of generation %d stays pending: numa-partition status shows it, apply finishes it, remove undoes it", err, w.rec.Generation)
	}
	if uerr := w.restore(); uerr != nil {
		return errors.Join(err, fmt.Errorf("restoring the previous record: %w", uerr))
	}
	return err
}

// finish completes an applied host: its record, and its Nodes deleted,
// told and let back in. The host is applied: what is left to do with the
// Nodes cannot undo it, so its failures are warnings.
func (a *attempt) finish(ctx context.Context, w *writeAhead, disrupted *nodes.Run, res *transaction.Result, changes map[string][]string, started time.Time) error {
	rep := a.rep
	recorded := transaction.WritesRecord(a.steps)
	if !recorded && w.written() {
		// The pending record holds the Nodes this apply cordoned, and no
		// record step replaced it: the finished record is written here.
		if err := w.finish(); err != nil {
			return fmt.Errorf("the host is applied, but the record stays pending (the next apply finishes it): %w", err)
		}
		recorded = true
	}
	if recorded {
		rep.Generation = w.rec.Generation
	}
	rep.Shortfalls = res.Shortfalls
	for _, sf := range res.Shortfalls {
		rep.Warnings = append(rep.Warnings, "hugepage shortfall: "+sf.String())
	}
	disrupted.Removed(ctx, w.rec.Generation)
	disrupted.Applied(ctx, w.rec.Partitions, changes, rep.Generation)
	for _, f := range disrupted.Deletions(ctx) {
		if err := f.Delete(); err != nil {
			rep.Warnings = append(rep.Warnings, err.Error())
		}
	}
	rep.Warnings = append(rep.Warnings, disrupted.Readmit(ctx, started)...)
	if len(w.rec.Cordoned) > 0 {
		// Without a record step the record on disk is not w.rec: what it
		// lists stays listed until an apply that writes it.
		rep.Warnings = append(rep.Warnings, nodes.SettleCordoned(ctx, a.o.nodeCommand(), w.rec, disrupted, restartedPartitions(a.steps, a.d.Units), started, recorded)...)
	}
	rep.Nodes = disrupted.Report()
	return nil
}
