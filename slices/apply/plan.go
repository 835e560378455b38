package apply

import (
	"bytes"
	"slices"
	"strings"

	bundle "github.com/numa-partition/numa-partition/slices/render"
)

// Plan turns the difference between what is desired and what is on the
// host into ordered steps. It is pure; the step order is the one in the
// package documentation. An empty result means "no changes".
func Plan(d Desired, c Current) []Step {
	var steps []Step
	desiredUnits := map[string]bool{}
	for _, u := range d.Units {
		desiredUnits[u.Name] = true
	}

	// 1. units of the previous generation that are gone: stop in reverse
	// start order, then disable.
	if c.Record != nil {
		gone := slices.DeleteFunc(slices.Clone(c.Record.Units), func(u bundle.Unit) bool { return desiredUnits[u.Name] })
		for _, u := range slices.Backward(gone) {
			if c.Units[u.Name].ActiveState != "inactive" && c.Units[u.Name].ActiveState != "" {
				steps = append(steps, Step{Kind: KindStop, Unit: u.Name, Reason: "no longer planned"})
			}
		}
		for _, u := range gone {
			if u.Enable && c.Units[u.Name].Enabled() {
				steps = append(steps, Step{Kind: KindDisable, Unit: u.Name, Reason: "no longer planned"})
			}
		}
	}

	// 2. files.
	changed := map[string]bool{}
	desiredFiles := map[string]bool{}
	for _, f := range d.Files {
		desiredFiles[f.Path] = true
		cur, ok := c.Files[f.Path]
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		switch {
		case !ok:
			steps = append(steps, Step{Kind: KindWrite, Path: f.Path, Content: f.Content, Mode: mode, Reason: "new"})
		case !bytes.Equal(cur.Content, f.Content):
			steps = append(steps, Step{Kind: KindWrite, Path: f.Path, Content: f.Content, Mode: mode, Reason: "changed"})
		case cur.Mode.Perm() != mode:
			steps = append(steps, Step{Kind: KindWrite, Path: f.Path, Content: f.Content, Mode: mode, Reason: "mode " + cur.Mode.Perm().String()})
		default:
			continue
		}
		changed[f.Path] = true
	}
	if c.Record != nil {
		for _, rf := range c.Record.Files {
			if _, exists := c.Files[rf.Path]; exists && !desiredFiles[rf.Path] {
				steps = append(steps, Step{Kind: KindRemove, Path: rf.Path, Reason: "no longer rendered"})
				changed[rf.Path] = true
			}
		}
	}

	// Slices no longer planned (a partition renamed or gone): their
	// runtime CPU drop-ins and v1 groups go with them.
	for _, unit := range c.StaleSlices {
		steps = append(steps, Step{Kind: KindForgetSlice, Unit: unit, Reason: "no longer planned"})
	}
	forgot := len(c.StaleSlices) > 0

	// 3. reload when a file changed.
	if len(changed) > 0 || forgot {
		steps = append(steps, Step{Kind: KindReload})
	}

	// Network objects of the previous generation the plan no longer has
	// (a renamed bridge, devices taken off a partition): gone before the
	// uplink and namespace oneshots restart, whose ExecStop= knows the
	// new plan's only.
	for _, s := range c.StaleNetwork {
		steps = append(steps, Step{Kind: KindForgetNetwork, Network: &s, Reason: "no longer planned"})
	}

	// 4. hugepages.
	for _, h := range d.Hugepages {
		cur, ok := c.Hugepages[HugepageKey{h.Node, h.PageSize}]
		if !ok || cur != h.Count {
			h := h
			h.Before = cur
			steps = append(steps, Step{Kind: KindHugepages, Hugepages: &h})
		}
	}

	unitChanged := func(u bundle.Unit) bool {
		return slices.ContainsFunc(u.Files, func(p string) bool { return changed[p] })
	}
	sets := map[string]SliceSet{}
	for _, s := range d.Slices {
		sets[s.Unit] = s
	}
	v1 := d.CgroupMode != CgroupV2

	// 5. slices: start, set CPUs live, cpuset v1 group.
	v1Regrouped := map[string]bool{}
	for _, u := range d.Units {
		if !isCgroupUnit(u.Name) {
			continue
		}
		st := c.Units[u.Name]
		started := false
		if u.Start && !st.Active() {
			steps = append(steps, Step{Kind: KindStart, Unit: u.Name, Reason: "not active"})
			started = true
		}
		s, ok := sets[u.Name]
		if !ok {
			continue
		}
		live := !st.AllowedCPUs.Equal(s.CPUs) || st.AllowedMemoryNodes != s.Mems
		if live || unitChanged(u) {
			steps = append(steps, Step{Kind: KindSetCPUs, Unit: u.Name, CPUs: s.CPUs, Mems: s.Mems})
		}
		// The group is missing or stale after an apply killed between
		// the slice's start and the group's write.
		group := c.CPUSetsV1[u.Name] != s.CPUs.String()+"/"+s.Mems.String()
		if v1 && u.Partition != "" && (live || unitChanged(u) || started || group) {
			steps = append(steps, Step{Kind: KindCPUSetV1, Unit: u.Name, CPUs: s.CPUs, Mems: s.Mems})
			v1Regrouped[u.Partition] = true
		}
	}

	// 6. enable, then start or restart services in phase order.
	for _, u := range d.Units {
		if u.Enable && (!c.Units[u.Name].Enabled() || unitChanged(u)) {
			steps = append(steps, Step{Kind: KindEnable, Unit: u.Name})
		}
	}
	attachV1 := func(u bundle.Unit) {
		if v1 && u.Partition != "" && strings.HasSuffix(u.Name, ".service") {
			if slice := partitionSlice(d.Units, u.Partition); slice != "" {
				steps = append(steps, Step{Kind: KindAttachV1, Unit: u.Name, Slice: slice})
			}
		}
	}
	for _, u := range d.Units {
		if isCgroupUnit(u.Name) || !u.Start {
			continue
		}
		st := c.Units[u.Name]
		// A kubelet whose managers' settings changed starts on fresh
		// state: stop, move the stale files aside, start (kubeletstate.go).
		if stamp, move := staleKubeletState(u, c); move {
			if st.Active() {
				steps = append(steps, Step{Kind: KindStop, Unit: u.Name, Reason: "its managers' settings changed"})
			}
			steps = append(steps, Step{Kind: KindKubeletState, Unit: u.Name, KubeletState: u.KubeletState, StateFiles: c.KubeletStates[u.Name].Files},
				Step{Kind: KindStart, Unit: u.Name, Reason: "on fresh manager state"})
			attachV1(u)
			continue
		} else if stamp {
			steps = append(steps, Step{Kind: KindKubeletState, Unit: u.Name, KubeletState: u.KubeletState})
		}
		switch {
		case !st.Active():
			steps = append(steps, Step{Kind: KindStart, Unit: u.Name, Reason: "not active"})
		case unitChanged(u):
			steps = append(steps, Step{Kind: KindRestart, Unit: u.Name, Reason: "files changed"})
		case v1Regrouped[u.Partition] && strings.HasSuffix(u.Name, ".service"):
		default:
			continue
		}
		attachV1(u)
	}

	// 7. record, when what the record says changed.
	if len(changed) > 0 || c.Record == nil || c.Record.Pending ||
		slices.ContainsFunc(steps, func(s Step) bool {
			return s.Kind == KindHugepages || s.Kind == KindSetCPUs || s.Kind == KindForgetNetwork
		}) {
		steps = append(steps, Step{Kind: KindRecord})
	}
	return steps
}

func partitionSlice(us []bundle.Unit, part string) string {
	for _, u := range us {
		if u.Partition == part && strings.HasSuffix(u.Name, ".slice") {
			return u.Name
		}
	}
	return ""
}

// Changed says whether steps change anything.
func Changed(steps []Step) bool { return len(steps) > 0 }
