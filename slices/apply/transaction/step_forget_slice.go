package transaction

import (
	"context"
	"fmt"
	"path"

	"github.com/numa-partition/numa-partition/slices/apply/host"
)

// KindForgetSlice drops what systemd and the kernel keep of a slice that
// is no longer planned: its runtime AllowedCPUs=/AllowedMemoryNodes=
// drop-ins and its cpuset and hugetlb v1 groups.
const KindForgetSlice Kind = "forget-slice"

// ForgetSlice removes what Unit, a slice no longer planned, left at
// runtime; the undo puts it back.
type ForgetSlice struct {
	Unit string `json:"unit"`
}

func (ForgetSlice) Kind() Kind         { return KindForgetSlice }
func (a ForgetSlice) describe() string { return a.Unit }

func (a ForgetSlice) run(e *Executor, ctx context.Context, cur Current, _ *Result) ([]undo, error) {
	var undos []undo
	for _, dir := range runtimeControlDirs {
		for _, prop := range []string{"AllowedCPUs", "AllowedMemoryNodes"} {
			rel := path.Join(dir, a.Unit+".d", "50-"+prop+".conf")
			old, ok, err := host.ReadFileState(e.Root, rel)
			if err != nil {
				return undos, fmt.Errorf("runtime %s of %s: %w", prop, a.Unit, err)
			}
			if !ok {
				continue
			}
			undos = append(undos, undo{phase: phaseFiles, what: "runtime " + prop + " of " + a.Unit, run: func(context.Context) error {
				return host.WriteFileAtomic(e.Root, rel, old.Content, old.Mode)
			}})
		}
	}
	if mode := cur.Record.CgroupMode; mode != CgroupV2 {
		g := cpusetV1Group(e.Root, sliceCgroup(a.Unit))
		if g.exists() {
			cpus, _ := g.read("cpuset.cpus")
			mems, _ := g.read("cpuset.mems")
			undos = append(undos, undo{what: "cpuset v1 group of " + a.Unit, run: func(context.Context) error { return g.set(cpus, mems) }})
		}
		if d := hugetlbV1Dir(sliceCgroup(a.Unit)); dirExists(e.Root, d) {
			undos = append(undos, undo{what: "hugetlb v1 group of " + a.Unit, run: func(context.Context) error { return host.Root(e.Root).MkdirAll(d, 0o755) }})
		}
	}
	for _, l := range SliceLeftovers(e.Root, cur.Record.CgroupMode, a.Unit) {
		if err := l.Remove(); err != nil {
			return undos, fmt.Errorf("%s: %w", l.What, err)
		}
	}
	return undos, nil
}

// forgetSlices forgets the slices no longer planned (a partition renamed
// or gone) that left runtime state (Gather's StaleSlices).
func forgetSlices(p *planning) {
	for _, unit := range p.c.StaleSlices {
		p.add(ForgetSlice{Unit: unit}, "no longer planned")
	}
}
