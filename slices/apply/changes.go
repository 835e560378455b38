package apply

import (
	"fmt"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/slices/bundle"
)

// partitionChanges says, for each partition, what steps change of it, in
// a few words for its PartitionApplied Event and in this order: its
// slice (with the CPUs and memory nodes set live), its kubelet's
// configuration, the files of its other units, its kubelet's manager
// state moved aside, the units started, restarted (or stopped and
// started) and stopped. units are
// the plan's and the record's, which name each unit's partition and
// files. Host-wide steps (a host slice, the hugepages, the uplink) are no
// partition's. It is pure.
func partitionChanges(units []bundle.Unit, steps []Step) map[string][]string {
	c := changeCollector{byName: map[string]bundle.Unit{}, owners: map[string][]bundle.Unit{}, per: map[string]*partitionChange{}}
	for _, u := range units {
		if _, seen := c.byName[u.Name]; seen || u.Partition == "" {
			continue // the plan's, listed first, wins
		}
		c.byName[u.Name] = u
		for _, f := range u.Files {
			c.owners[f] = append(c.owners[f], u)
		}
	}
	for _, s := range steps {
		c.add(s)
	}
	out := map[string][]string{}
	for _, p := range c.order {
		out[p] = c.per[p].phrases()
	}
	return out
}

// changeCollector sorts steps by the partition they change.
type changeCollector struct {
	byName map[string]bundle.Unit
	owners map[string][]bundle.Unit // a file's units
	per    map[string]*partitionChange
	order  []string // partitions, as first changed
}

// partitionChange is what steps change of one partition.
type partitionChange struct {
	slice, kubelet, files, state []string // files: the other units whose files change
	verbs                        map[Kind][]string
}

func (c *changeCollector) get(partition string) *partitionChange {
	if c.per[partition] == nil {
		c.per[partition] = &partitionChange{verbs: map[Kind][]string{}}
		c.order = append(c.order, partition)
	}
	return c.per[partition]
}

// add notes what step s changes, for the partition it changes.
func (c *changeCollector) add(s Step) {
	switch a := s.Action.(type) {
	case WriteFile, RemoveFile:
		f, _, _ := s.fileChange()
		for _, u := range c.owners[f.Path] {
			w := c.get(u.Partition)
			switch {
			case u.Phase == bundle.PhaseSlice:
				w.slice = appendNew(w.slice, "slice "+u.Name)
			case u.KubeletState != nil:
				w.kubelet = appendNew(w.kubelet, "kubelet config")
			default:
				w.files = appendNew(w.files, u.Name)
			}
		}
	case SetSliceCPUs:
		if u, ok := c.byName[a.Unit]; ok {
			w := c.get(u.Partition)
			w.slice = slices.DeleteFunc(w.slice, func(x string) bool { return x == "slice "+u.Name })
			w.slice = appendNew(w.slice, fmt.Sprintf("slice %s (CPUs %s, memory nodes %s)", u.Name, a.CPUs, a.Mems))
		}
	case PrepareKubeletState:
		if u, ok := c.byName[a.Unit]; ok {
			w := c.get(u.Partition)
			w.state = appendNew(w.state, "manager state of "+u.Name+" moved aside")
		}
	case StartUnit:
		c.verb(KindStart, a.Unit)
	case RestartUnit:
		c.verb(KindRestart, a.Unit)
	case StopUnit:
		c.verb(KindStop, a.Unit)
	}
}

// verb notes a service's start, restart or stop (not a slice's).
func (c *changeCollector) verb(k Kind, unit string) {
	if u, ok := c.byName[unit]; ok && !strings.HasSuffix(u.Name, ".slice") {
		w := c.get(u.Partition)
		w.verbs[k] = appendNew(w.verbs[k], u.Name)
	}
}

// phrases says what changes, in partitionChanges's order.
func (w *partitionChange) phrases() []string {
	l := slices.Concat(w.slice, w.kubelet)
	if len(w.files) > 0 {
		l = append(l, "files of "+strings.Join(w.files, ", "))
	}
	l = append(l, w.state...)
	// A unit stopped and started again (a kubelet whose state is moved
	// aside in between) is restarted.
	for _, u := range w.verbs[KindStart] {
		if slices.Contains(w.verbs[KindStop], u) {
			w.verbs[KindRestart] = appendNew(w.verbs[KindRestart], u)
		}
	}
	restarted := func(u string) bool { return slices.Contains(w.verbs[KindRestart], u) }
	w.verbs[KindStart] = slices.DeleteFunc(w.verbs[KindStart], restarted)
	w.verbs[KindStop] = slices.DeleteFunc(w.verbs[KindStop], restarted)
	for _, k := range []Kind{KindStart, KindRestart, KindStop} {
		if u := w.verbs[k]; len(u) > 0 {
			l = append(l, string(k)+" "+strings.Join(u, ", "))
		}
	}
	return l
}
