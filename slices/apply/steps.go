package apply

import (
	"context"
	"fmt"
	"path"

	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// runner runs one kind of step and returns how to undo it.
type runner func(*Executor, context.Context, Step, Current, *Result) ([]undo, error)

// stepRunners run each kind of step; each returns how to undo it.
var stepRunners = map[Kind]runner{
	KindStop:          unitJob(systemd.Manager.StopUnit),
	KindDisable:       unitFileJob("disable", systemd.Manager.DisableUnitFiles, systemd.Manager.EnableUnitFiles, true),
	KindWrite:         (*Executor).runWriteOrRemove,
	KindRemove:        (*Executor).runWriteOrRemove,
	KindReload:        (*Executor).runReload,
	KindHugepages:     (*Executor).runHugepages,
	KindStart:         unitJob(systemd.Manager.StartUnit),
	KindRestart:       unitJob(systemd.Manager.RestartUnit),
	KindSetCPUs:       (*Executor).runSetCPUs,
	KindCPUSetV1:      (*Executor).runCpusetV1,
	KindAttachV1:      (*Executor).runAttachV1,
	KindEnable:        unitFileJob("enable", systemd.Manager.EnableUnitFiles, systemd.Manager.DisableUnitFiles, false),
	KindForgetSlice:   (*Executor).runForgetSlice,
	KindRecord:        (*Executor).runRecord,
	KindKubeletState:  (*Executor).runKubeletState,
	KindForgetNetwork: (*Executor).runForgetNetwork,
}

// unitJob runs a start, stop or restart; the undo restores whether the
// unit ran.
func unitJob(job func(systemd.Manager, context.Context, string) error) runner {
	return func(e *Executor, ctx context.Context, s Step, cur Current, _ *Result) ([]undo, error) {
		return []undo{e.restoreActive(s.Unit, cur.Units[s.Unit])}, job(e.Systemd, ctx, s.Unit)
	}
}

// unitFileJob enables or disables a unit (do); the undo runs back only
// when do changed something: when the unit's enabled state before was
// changedFrom (true for a disable, false for an enable). A unit already
// back in that state is done, whatever back answered (a unit file gone).
func unitFileJob(what string, do, back func(systemd.Manager, context.Context, []string) error, changedFrom bool) runner {
	return func(e *Executor, ctx context.Context, s Step, cur Current, _ *Result) ([]undo, error) {
		before := cur.Units[s.Unit].Enabled()
		u := undo{phase: phaseFiles, what: what + " " + s.Unit, run: func(ctx context.Context) error {
			if before != changedFrom {
				return nil
			}
			err := back(e.Systemd, ctx, []string{s.Unit})
			return settled(ctx, e.Systemd, s.Unit, err, func(u systemd.UnitInfo) bool { return u.Enabled() == changedFrom })
		}}
		return []undo{u}, do(e.Systemd, ctx, []string{s.Unit})
	}
}

// do runs one step and returns how to undo it.
func (e *Executor) do(ctx context.Context, s Step, cur Current, res *Result) ([]undo, error) {
	run, ok := stepRunners[s.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown step kind %q", s.Kind)
	}
	return run(e, ctx, s, cur, res)
}

// runWriteOrRemove writes or removes a file, keeping a foreign original aside; the undo puts back what was there.
func (e *Executor) runWriteOrRemove(ctx context.Context, s Step, cur Current, res *Result) ([]undo, error) {
	p := e.path(s.Path)
	old, existed := cur.Files[s.Path]
	u := undo{phase: phaseFiles, what: string(s.Kind) + " /" + s.Path, run: func(context.Context) error {
		if existed {
			return writeFileAtomic(e.Root, s.Path, old.Content, old.Mode)
		}
		return removeFile(e.Root, s.Path)
	}}
	if s.Kind == KindRemove {
		f, ours := cur.Record.file(s.Path)
		if !ours {
			return nil, fmt.Errorf("removing %s: the record does not list it, so nothing says apply wrote it", p)
		}
		return []undo{u}, e.removeOwned(f)
	}
	var undos []undo
	if existed {
		if _, ours := cur.Record.file(s.Path); !ours {
			kept, err := e.keepOriginal(s.Path, old)
			if err != nil {
				return kept, err
			}
			undos = append(undos, kept...)
		}
	}
	created := missingDirs(e.Root, path.Dir(s.Path))
	e.Record.Dirs = appendNew(e.Record.Dirs, created...)
	undos = append(undos, undo{phase: phaseFiles, what: "directories of /" + s.Path, run: func(context.Context) error {
		return removeEmptyDirs(e.Root, created)
	}}, u)
	if err := writeFileAtomic(e.Root, s.Path, s.Content, s.Mode); err != nil {
		return undos, fmt.Errorf("writing %s: %w", p, err)
	}
	return undos, nil
}

// runReload is daemon-reload (nothing to undo: the next reload reads the restored files).
func (e *Executor) runReload(ctx context.Context, s Step, cur Current, res *Result) ([]undo, error) {
	m := e.Systemd
	return nil, m.Reload(ctx)
}

// runHugepages sets a node's pool and records a shortfall; the undo sets the count before.
func (e *Executor) runHugepages(ctx context.Context, s Step, cur Current, res *Result) ([]undo, error) {
	h := *s.Hugepages
	u := undo{what: "hugepages " + h.String(), run: func(context.Context) error {
		_, err := hugepool.SetPool(e.poolWriter(), e.Sysfs, h.pool(true))
		return err
	}}
	got, err := hugepool.SetPool(e.poolWriter(), e.Sysfs, h.pool(false))
	if err == nil && got < h.Count {
		sf := Shortfall{Node: h.Node, PageSize: h.PageSize, Wanted: h.Count, Got: got}
		res.Shortfalls = append(res.Shortfalls, sf)
		e.logger().Warn("hugepage shortfall", "detail", sf.String())
	}
	return []undo{u}, err
}

// runSetCPUs sets a slice's AllowedCPUs=/AllowedMemoryNodes= live; the undo sets the old ones.
func (e *Executor) runSetCPUs(ctx context.Context, s Step, cur Current, res *Result) ([]undo, error) {
	m := e.Systemd
	st := cur.Units[s.Unit]
	u := undo{what: "set-property " + s.Unit, run: func(ctx context.Context) error {
		return m.SetUnitProperties(ctx, s.Unit, systemd.AllowedCPUs(st.AllowedCPUs), systemd.AllowedMemoryNodes(st.AllowedMemoryNodes))
	}}
	return []undo{u}, m.SetUnitProperties(ctx, s.Unit, systemd.AllowedCPUs(s.CPUs), systemd.AllowedMemoryNodes(s.Mems))
}

// runCpusetV1 writes a slice's cpuset v1 group (cgroup v1 hosts); the undo restores or removes it.
func (e *Executor) runCpusetV1(ctx context.Context, s Step, cur Current, res *Result) ([]undo, error) {
	g := cpusetV1Group(e.Root, sliceCgroup(s.Unit))
	existed := g.exists()
	oldCPUs, _ := g.read("cpuset.cpus")
	oldMems, _ := g.read("cpuset.mems")
	u := undo{what: "cpuset v1 " + s.Unit, run: func(context.Context) error {
		if !existed {
			return g.remove()
		}
		return g.set(oldCPUs, oldMems)
	}}
	return []undo{u}, g.set(s.CPUs.String(), s.Mems.String())
}

// runAttachV1 moves a started service's processes into its slice's cpuset v1 group.
func (e *Executor) runAttachV1(ctx context.Context, s Step, cur Current, res *Result) ([]undo, error) {
	m := e.Systemd
	info, err := m.Unit(ctx, s.Unit)
	if err != nil {
		return nil, err
	}
	if info.ControlGroup == "" {
		return nil, nil // a oneshot that has exited has no processes
	}
	_, err = cpusetV1Group(e.Root, sliceCgroup(s.Slice)).attach(e.Root, info.ControlGroup)
	return nil, err
}

// runForgetSlice removes what a slice no longer planned left at runtime (drop-ins, v1 groups); the undo puts them back.
func (e *Executor) runForgetSlice(ctx context.Context, s Step, cur Current, res *Result) ([]undo, error) {
	var undos []undo
	for _, dir := range runtimeControlDirs {
		for _, prop := range []string{"AllowedCPUs", "AllowedMemoryNodes"} {
			rel := path.Join(dir, s.Unit+".d", "50-"+prop+".conf")
			old, ok, err := readFileState(e.Root, rel)
			if err != nil {
				return undos, fmt.Errorf("runtime %s of %s: %w", prop, s.Unit, err)
			}
			if !ok {
				continue
			}
			undos = append(undos, undo{phase: phaseFiles, what: "runtime " + prop + " of " + s.Unit, run: func(context.Context) error {
				return writeFileAtomic(e.Root, rel, old.Content, old.Mode)
			}})
		}
	}
	if mode := cur.Record.CgroupMode; mode != CgroupV2 {
		g := cpusetV1Group(e.Root, sliceCgroup(s.Unit))
		if g.exists() {
			cpus, _ := g.read("cpuset.cpus")
			mems, _ := g.read("cpuset.mems")
			undos = append(undos, undo{what: "cpuset v1 group of " + s.Unit, run: func(context.Context) error { return g.set(cpus, mems) }})
		}
		if d := hugetlbV1Dir(sliceCgroup(s.Unit)); dirExists(e.Root, d) {
			undos = append(undos, undo{what: "hugetlb v1 group of " + s.Unit, run: func(context.Context) error { return rootOf(e.Root).MkdirAll(d, 0o755) }})
		}
	}
	for _, l := range sliceLeftovers(e.Root, cur.Record.CgroupMode, s.Unit) {
		if err := l.remove(); err != nil {
			return undos, fmt.Errorf("%s: %w", l.what, err)
		}
	}
	return undos, nil
}

// runRecord writes the record; the undo puts the previous one back.
func (e *Executor) runRecord(ctx context.Context, s Step, cur Current, res *Result) ([]undo, error) {
	return e.writeOwn(RecordPath, "record", e.Record.marshal)
}

// writeOwn writes one of apply's own files at rel, not a bundle file (the
// record, a kubelet's settings stamp): the directories it makes are
// recorded first, then content is computed and written; the undo puts
// back what was there, or removes the file and those directories.
func (e *Executor) writeOwn(rel, what string, content func() ([]byte, error)) ([]undo, error) {
	old, existed, err := readFileState(e.Root, rel)
	if err != nil {
		return nil, err
	}
	created := missingDirs(e.Root, path.Dir(rel))
	e.Record.Dirs = appendNew(e.Record.Dirs, created...)
	u := undo{phase: phaseFiles, what: what, run: func(context.Context) error {
		if existed {
			return writeFileAtomic(e.Root, rel, old.Content, old.Mode)
		}
		if err := removeFile(e.Root, rel); err != nil {
			return err
		}
		return removeEmptyDirs(e.Root, created)
	}}
	b, err := content()
	if err != nil {
		return nil, err
	}
	return []undo{u}, writeFileAtomic(e.Root, rel, b, 0o644)
}
