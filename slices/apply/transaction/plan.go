package transaction

import (
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// Plan turns the difference between what is desired and what is on the
// host into ordered steps. It is pure. An empty result means "no
// changes".
func Plan(d Desired, c Current) []Step {
	p := &planning{d: d, c: c, changed: map[string]bool{}, v1Regrouped: map[string]bool{}}
	for _, phase := range phases {
		phase(p)
	}
	return p.steps
}

// phases are Plan's, in the order their steps run: a new kind of step is
// one file (step_*.go) and, when it has a phase of its own, one line here.
var phases = []func(*planning){
	retireGone,      // 1. units of the previous generation: stopped, then disabled
	writeFiles,      // 2. files: the rendered ones written,
	removeFiles,     //    those no longer rendered removed,
	forgetSlices,    //    and slices no longer planned forgotten
	reload,          // 3. one daemon-reload when a file changed
	forgetNetwork,   //    network objects no longer planned, before the oneshots restart
	setHugepages,    // 4. hugepage pools
	startSlices,     // 5. slices: started, CPUs set live, cpuset v1 groups
	enableUnits,     // 6. units enabled, then
	startServices,   //    services started or restarted in phase order
	recordIfChanged, // 7. the record, when what it says changed
}

// planning is what Plan's phases share.
type planning struct {
	d     Desired
	c     Current
	steps []Step
	// changed are the files written or removed.
	changed map[string]bool
	// v1Regrouped are the partitions whose cpuset v1 group was set: their
	// running services join it again.
	v1Regrouped map[string]bool
}

func (p *planning) add(a Action, reason string) {
	p.steps = append(p.steps, Step{Action: a, Reason: reason})
}

// unitChanged says whether one of u's files changes.
func (p *planning) unitChanged(u bundle.Unit) bool {
	return slices.ContainsFunc(u.Files, func(f string) bool { return p.changed[f] })
}

// v1 says whether the host's cpusets are cgroup v1's (v1 or hybrid).
func (p *planning) v1() bool { return p.d.CgroupMode != CgroupV2 }

// retireGone stops the units of the previous generation the plan no
// longer has, in reverse start order, then disables them.
func retireGone(p *planning) {
	if p.c.Record == nil {
		return
	}
	planned := map[string]bool{}
	for _, u := range p.d.Units {
		planned[u.Name] = true
	}
	gone := slices.DeleteFunc(slices.Clone(p.c.Record.Units), func(u bundle.Unit) bool { return planned[u.Name] })
	for _, u := range slices.Backward(gone) {
		if st := p.c.Units[u.Name].ActiveState; st != "inactive" && st != "" {
			p.add(StopUnit{Unit: u.Name}, "no longer planned")
		}
	}
	for _, u := range gone {
		if u.Enable && p.c.Units[u.Name].Enabled() {
			p.add(DisableUnit{Unit: u.Name}, "no longer planned")
		}
	}
}

// startSlices starts the slices, sets their CPUs and memory nodes live,
// and on a cgroup v1 or hybrid host writes a partition slice's cpuset v1
// group.
func startSlices(p *planning) {
	sets := map[string]record.SliceSet{}
	for _, s := range p.d.Slices {
		sets[s.Unit] = s
	}
	for _, u := range p.d.Units {
		if !IsCgroupUnit(u.Name) {
			continue
		}
		st := p.c.Units[u.Name]
		started := u.Start && !st.Active()
		if started {
			p.add(StartUnit{Unit: u.Name}, "not active")
		}
		s, ok := sets[u.Name]
		if !ok {
			continue
		}
		live := !st.AllowedCPUs.Equal(s.CPUs) || st.AllowedMemoryNodes != s.Mems
		if live || p.unitChanged(u) {
			p.add(SetSliceCPUs{Unit: u.Name, CPUs: s.CPUs, Mems: s.Mems}, "")
		}
		// The group is missing or stale after an apply killed between
		// the slice's start and the group's write.
		group := p.c.CPUSetsV1[u.Name] != s.CPUs.String()+"/"+s.Mems.String()
		if p.v1() && u.Partition != "" && (live || p.unitChanged(u) || started || group) {
			p.add(SetCPUSetV1{Unit: u.Name, CPUs: s.CPUs, Mems: s.Mems}, "")
			p.v1Regrouped[u.Partition] = true
		}
	}
}

// startServices starts or restarts the services in phase order; a
// kubelet whose managers' settings changed starts on fresh state: stop,
// move the stale files aside, start (kubeletstate.go).
func startServices(p *planning) {
	for _, u := range p.d.Units {
		if IsCgroupUnit(u.Name) || !u.Start {
			continue
		}
		st := p.c.Units[u.Name]
		if stamp, move := staleKubeletState(u, p.c); move {
			if st.Active() {
				p.add(StopUnit{Unit: u.Name}, "its managers' settings changed")
			}
			p.add(PrepareKubeletState{Unit: u.Name, KubeletState: u.KubeletState, StateFiles: p.c.KubeletStates[u.Name].Files}, "")
			p.add(StartUnit{Unit: u.Name}, "on fresh manager state")
			p.attachV1(u)
			continue
		} else if stamp {
			p.add(PrepareKubeletState{Unit: u.Name, KubeletState: u.KubeletState}, "")
		}
		switch {
		case !st.Active():
			p.add(StartUnit{Unit: u.Name}, "not active")
		case p.unitChanged(u) && !u.KeepOnChange:
			p.add(RestartUnit{Unit: u.Name}, "files changed")
		case p.v1Regrouped[u.Partition] && strings.HasSuffix(u.Name, ".service"):
		default:
			continue
		}
		p.attachV1(u)
	}
}

// Changed says whether steps change anything.
func Changed(steps []Step) bool { return len(steps) > 0 }
