package apply

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// RemoveReport is what remove did.
type RemoveReport struct {
	Generation int      `json:"generation"` // the generation removed, 0 when none
	Actions    []string `json:"actions"`
	Seconds    float64  `json:"seconds"`
	// DryRun: the actions are what remove would do; nothing was done.
	DryRun bool `json:"dryRun,omitempty"`
	// Offline: a dry run of a root no systemd runs on (Options.Offline).
	Offline bool `json:"offline,omitempty"`
	// Nodes are the partitions' Kubernetes Nodes: the pods found bound,
	// the drain, the deletion (package nodes).
	Nodes []nodes.Removal `json:"nodes"`
	// Kept are the recorded files remove left in place because they are
	// no longer what apply wrote (edited, or replaced by a link).
	Kept     []KeptFile `json:"kept"`
	Warnings []string   `json:"warnings"`
}

// KeptFile is a file the record lists that remove kept.
type KeptFile struct {
	Path   string `json:"path"`   // absolute on the host
	Reason string `json:"reason"` // why: "changed after apply (…)"
}

// widenHostCPUs sets, at runtime, every host slice and scope apply locked
// (system.slice, init.scope, ...) to the root slice's effective CPUs and
// memory nodes: the whole machine, as before apply.
func widenHostCPUs(ctx context.Context, o Options, rec *record.Record) error {
	root, err := o.Systemd.Unit(ctx, "-.slice")
	if err != nil {
		return fmt.Errorf("reading the root slice's CPUs: %w", err)
	}
	if root.EffectiveCPUs.IsEmpty() {
		return nil // no cpuset controller in force: nothing was confined
	}
	props := []systemd.Property{systemd.AllowedCPUs(root.EffectiveCPUs)}
	if !root.EffectiveMemoryNodes.IsEmpty() {
		props = append(props, systemd.AllowedMemoryNodes(root.EffectiveMemoryNodes))
	}
	partitionUnit := map[string]bool{}
	for _, u := range rec.Units {
		if u.Partition != "" {
			partitionUnit[u.Name] = true
		}
	}
	var errs []error
	for _, s := range rec.Slices {
		if partitionUnit[s.Unit] {
			continue // stopped; its drop-ins are gone
		}
		if err := o.Systemd.SetUnitProperties(ctx, s.Unit, props...); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Unit, err))
		}
	}
	return errors.Join(errs...)
}

// keep reports the recorded file f kept for the reason given, in the
// report and as a warning (remove prints those on standard error).
func (rep *RemoveReport) keep(f record.File, reason string) {
	k := KeptFile{Path: "/" + f.Path, Reason: reason}
	rep.Kept = append(rep.Kept, k)
	w := fmt.Sprintf("kept %s: it was %s, and deleting it would lose what is there; delete it by hand if it is no longer wanted", k.Path, reason)
	if f.Original {
		w += fmt.Sprintf(" (the file it replaced at the first apply is kept at /%s)", path.Join(transaction.OriginalsDir, f.Path))
	}
	rep.Warnings = append(rep.Warnings, w)
}

// Remove undoes the applied generation: stops and disables its units,
// deletes its files (putting back originals it replaced; a file no
// longer what apply wrote is kept and reported, RemoveReport.Kept), drops the
// runtime properties it set, frees the hugepages it allocated, reloads
// and deletes the record. It goes on after a failing action, so that as
// much as possible is undone, and returns all failures together.
func Remove(ctx context.Context, o Options) (*RemoveReport, error) {
	t0 := time.Now()
	o.defaults()
	if err := o.offlineDryRun(); err != nil {
		return nil, err
	}
	if !o.DryRun {
		lock, err := AcquireLock(o.Root)
		if err != nil {
			return nil, err
		}
		defer lock.Release()
	}
	rec, err := record.Read(o.Root)
	if err != nil {
		return nil, err
	}
	rep := &RemoveReport{Actions: []string{}, Nodes: []nodes.Removal{}, Kept: []KeptFile{}, Warnings: []string{}}
	if rec == nil {
		rep.Seconds = time.Since(t0).Seconds()
		return rep, nil
	}
	rep.Generation = rec.Generation
	o.events = o.newEvents(rec.Hostname)
	targets := nodes.RemoveTargets(rec)
	if o.Offline {
		rep.Offline, targets = true, nil
		rep.Warnings = append(rep.Warnings, offlineRemoveWarning)
	}
	disrupted, warnings, err := nodes.Prepare(ctx, o.nodeCommand(), "remove", targets, nil)
	if err != nil {
		return nil, fmt.Errorf("remove of generation %d refused before it changed anything on the host: %w", rec.Generation, err)
	}
	defer disrupted.Close()
	rep.Warnings = append(rep.Warnings, warnings...)
	defer func() { rep.Nodes = append(rep.Nodes, disrupted.Removals()...) }()
	rep.DryRun = o.DryRun
	r := &removal{o: o, rec: rec, rep: rep, disrupted: disrupted}
	for _, phase := range removePhases {
		phase(r, ctx)
	}
	if err := errors.Join(r.errs...); err != nil {
		return rep, fmt.Errorf("remove of generation %d incomplete (the record is kept, run remove again): %w", rec.Generation, err)
	}
	r.do("delete the record", func() error { return host.RemoveFile(o.Root, record.Path) })
	r.do("remove the directories apply created", func() error { return transaction.RemoveEmptyDirs(o.Root, rec.Dirs) })
	rep.Seconds = time.Since(t0).Seconds()
	return rep, errors.Join(r.errs...)
}

// removePhases are Remove's, in order; each goes on past a failing
// action and adds its error to the others.
var removePhases = []func(*removal, context.Context){
	(*removal).stopUnits,     // the partitions' units, in reverse start order, and their shims
	(*removal).removeNetwork, // what the network units' ExecStop= left
	(*removal).deleteNodes,   // once the kubelets are stopped: a running one would register again
	(*removal).disableUnits,  // the units apply enabled
	(*removal).sweepTemps,    // before the files, so that the directories apply made empty out
	(*removal).deleteStamps,  // the kubelets' settings stamps
	(*removal).deleteFiles,   // originals put back, files no longer apply's kept
	(*removal).widenHostCPUs, // cgroup v2: before the runtime properties go
	(*removal).forgetSlices,  // runtime properties and v1 groups
	(*removal).freeHugepages, // the pools back to their counts before
	(*removal).reload,        // systemd reads the files as they are now
}

// removal is one Remove's progress: what its phases share.
type removal struct {
	o         Options
	rec       *record.Record
	rep       *RemoveReport
	disrupted *nodes.Run
	errs      []error
}

// do runs one action, or with DryRun only lists it.
func (r *removal) do(what string, f func() error) {
	if r.o.DryRun {
		r.rep.Actions = append(r.rep.Actions, what)
		return
	}
	if err := f(); err != nil {
		r.errs = append(r.errs, err)
		return
	}
	r.rep.Actions = append(r.rep.Actions, what)
}

// stopUnits stops the recorded units in reverse start order (a host slice
// or scope stays: its properties go in forgetSlices), then kills the
// processes a runtime leaves (its shims: KillMode=process).
func (r *removal) stopUnits(ctx context.Context) {
	m := r.o.Systemd
	for _, u := range slices.Backward(r.rec.Units) {
		if u.Partition == "" && transaction.IsCgroupUnit(u.Name) {
			continue
		}
		st, err := m.Unit(ctx, u.Name)
		if err != nil {
			r.errs = append(r.errs, err)
			continue
		}
		if st.ActiveState != "inactive" {
			r.do("stop "+u.Name, func() error { return m.StopUnit(ctx, u.Name) })
		}
		if u.Phase != bundle.PhaseRuntime || st.ControlGroup == "" {
			continue
		}
		if r.o.DryRun { // which processes are left is known only after the stop
			r.do("kill the processes left in "+u.Name+" (its shims: KillMode=process)", nil)
			continue
		}
		pids, err := transaction.KillLeftovers(ctx, r.o.Root, r.rec.CgroupMode, st.ControlGroup)
		if len(pids) > 0 || err != nil {
			r.do(fmt.Sprintf("kill %d processes left in %s (its shims: KillMode=process)", len(pids), u.Name), func() error { return err })
		}
	}
}

// removeNetwork removes the network objects the stopped units left.
func (r *removal) removeNetwork(context.Context) {
	if r.o.DryRun {
		return
	}
	for _, f := range networkLeftovers(r.o.Root, r.rec) {
		r.do(f.What, f.Remove)
	}
}

// deleteNodes deletes the partitions' Nodes, once their kubelets stopped
// (a running one would register again).
func (r *removal) deleteNodes(ctx context.Context) {
	if len(r.errs) == 0 {
		r.disrupted.Removed(ctx, r.rec.Generation)
	}
	for _, f := range r.disrupted.Deletions(ctx) {
		r.do(f.What, f.Delete)
	}
}

// disableUnits disables the recorded units apply enabled.
func (r *removal) disableUnits(ctx context.Context) {
	m := r.o.Systemd
	for _, u := range r.rec.Units {
		if !u.Enable {
			continue
		}
		// An apply killed before it enabled (or even wrote) the unit.
		if st, err := m.Unit(ctx, u.Name); err == nil && !st.Enabled() {
			continue
		}
		r.do("disable "+u.Name, func() error { return m.DisableUnitFiles(ctx, []string{u.Name}) })
	}
}

// sweepTemps deletes the temporary files a kill during a write (#24 item
// 18) left.
func (r *removal) sweepTemps(context.Context) {
	if r.o.DryRun {
		return
	}
	swept, err := transaction.SweepTemps(r.o.Root, transaction.OwnPaths(nil, nil, r.rec))
	for _, p := range swept {
		r.rep.Actions = append(r.rep.Actions, "delete "+p+" (the temporary file of an interrupted write)")
	}
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

// deleteStamps deletes the kubelets' settings stamps.
func (r *removal) deleteStamps(context.Context) {
	for _, u := range r.rec.Units {
		if u.KubeletState == nil {
			continue
		}
		rel := path.Join(u.KubeletState.Dir, transaction.KubeletStampName)
		if host.Exists(r.o.Root, rel) {
			r.do("delete /"+rel, func() error { return host.RemoveFile(r.o.Root, rel) })
		}
	}
}

// deleteFiles deletes the recorded files, last first, putting back the
// originals they replaced; a file no longer what apply wrote is kept.
func (r *removal) deleteFiles(context.Context) {
	ex := &transaction.Executor{Root: r.o.Root, Systemd: r.o.Systemd}
	for _, f := range slices.Backward(r.rec.Files) {
		kept, err := transaction.KeptReason(r.o.Root, f)
		switch {
		case err != nil:
			r.errs = append(r.errs, err)
			continue
		case kept != "":
			r.rep.keep(f, kept)
			continue
		}
		what := "delete /" + f.Path
		if f.Original {
			what = "restore the original /" + f.Path
		}
		r.do(what, func() error { return ex.RemoveOwned(f) })
	}
}

// widenHostCPUs widens the host units' cpusets to the whole machine on
// cgroup v2: systemd does not rewrite a cpuset when AllowedCPUs= merely
// goes away (found by the e2e: system.slice and PID 1 stayed on the host
// CPUs after remove); dropping the runtime files in forgetSlices then
// leaves their cpusets there, as they were before apply.
func (r *removal) widenHostCPUs(ctx context.Context) {
	if r.rec.CgroupMode == transaction.CgroupV2 {
		r.do("widen the host units' cpusets to the whole machine", func() error { return widenHostCPUs(ctx, r.o, r.rec) })
	}
}

// forgetSlices drops the slices' runtime properties and v1 groups.
func (r *removal) forgetSlices(context.Context) {
	for _, s := range r.rec.Slices {
		for _, f := range transaction.SliceLeftovers(r.o.Root, r.rec.CgroupMode, s.Unit) {
			r.do(f.What, f.Remove)
		}
	}
}

// freeHugepages sets each recorded pool back to its count before apply.
func (r *removal) freeHugepages(context.Context) {
	for _, h := range r.rec.Hugepages {
		if cur, err := hugepool.Read(hugepool.Path(r.o.Sysfs, h.Node, h.PageSize)); err == nil && cur == h.Before {
			continue
		}
		back := record.HugepageTarget{Node: h.Node, PageSize: h.PageSize, Count: h.Before}
		r.do("hugepages "+back.String(), func() error { _, err := hugepool.SetPool(r.o.PoolWriter, r.o.Sysfs, back.Pool(false)); return err })
	}
}

// reload reloads systemd, then forgets the units' failed states (most are
// not loaded any more).
func (r *removal) reload(ctx context.Context) {
	m := r.o.Systemd
	r.do("daemon-reload", func() error { return m.Reload(ctx) })
	if !r.o.DryRun {
		for _, u := range r.rec.Units {
			_ = m.ResetFailed(ctx, u.Name)
		}
	}
}
