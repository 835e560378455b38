package apply

import (
	"fmt"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/slices/apply/transaction"
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
func partitionChanges(units []bundle.Unit, steps []transaction.Step) map[string][]string {
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
	verbs                        map[transaction.Kind][]string
}

func (c *changeCollector) get(partition string) *partitionChange {
	if c.per[partition] == nil {
		c.per[partition] = &partitionChange{verbs: map[transaction.Kind][]string{}}
		c.order = append(c.order, partition)
	}
	return c.per[partition]
}

// add notes what step s changes, for the partition it changes.
func (c *changeCollector) add(s transaction.Step) {
	switch a := s.Action.(type) {
	case transaction.WriteFile, transaction.RemoveFile:
		f, _, _ := s.FileChange()
		for _, u := range c.owners[f.Path] {
			w := c.get(u.Partition)
			switch {
			case u.Phase == bundle.PhaseSlice:
				w.slice = transaction.AppendNew(w.slice, "slice "+u.Name)
			case u.KubeletState != nil:
				w.kubelet = transaction.AppendNew(w.kubelet, "kubelet config")
			default:
				w.files = transaction.AppendNew(w.files, u.Name)
			}
		}
	case transaction.SetSliceCPUs:
		if u, ok := c.byName[a.Unit]; ok {
			w := c.get(u.Partition)
			w.slice = slices.DeleteFunc(w.slice, func(x string) bool { return x == "slice "+u.Name })
			w.slice = transaction.AppendNew(w.slice, fmt.Sprintf("slice %s (CPUs %s, memory nodes %s)", u.Name, a.CPUs, a.Mems))
		}
	case transaction.PrepareKubeletState:
		if u, ok := c.byName[a.Unit]; ok {
			w := c.get(u.Partition)
			w.state = transaction.AppendNew(w.state, "manager state of "+u.Name+" moved aside")
		}
	case transaction.StartUnit:
		c.verb(transaction.KindStart, a.Unit)
	case transaction.RestartUnit:
		c.verb(transaction.KindRestart, a.Unit)
	case transaction.StopUnit:
		c.verb(transaction.KindStop, a.Unit)
	}
}

// verb notes a service's start, restart or stop (not a slice's).
func (c *changeCollector) verb(k transaction.Kind, unit string) {
	if u, ok := c.byName[unit]; ok && !strings.HasSuffix(u.Name, ".slice") {
		w := c.get(u.Partition)
		w.verbs[k] = transaction.AppendNew(w.verbs[k], u.Name)
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
	for _, u := range w.verbs[transaction.KindStart] {
		if slices.Contains(w.verbs[transaction.KindStop], u) {
			w.verbs[transaction.KindRestart] = transaction.AppendNew(w.verbs[transaction.KindRestart], u)
		}
	}
	restarted := func(u string) bool { return slices.Contains(w.verbs[transaction.KindRestart], u) }
	w.verbs[transaction.KindStart] = slices.DeleteFunc(w.verbs[transaction.KindStart], restarted)
	w.verbs[transaction.KindStop] = slices.DeleteFunc(w.verbs[transaction.KindStop], restarted)
	for _, k := range []transaction.Kind{transaction.KindStart, transaction.KindRestart, transaction.KindStop} {
		if u := w.verbs[k]; len(u) > 0 {
			l = append(l, string(k)+" "+strings.Join(u, ", "))
		}
	}
	return l
}
