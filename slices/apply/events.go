package apply

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// Events on the partitions' Nodes (#40): what apply and remove did to
// each partition's Node, where `kubectl describe node` and `kubectl get
// events` show it. Each Event goes through the client the command has for
// that Node (nodeRun.client: --kubeconfig's identity, else the
// partition's own kubelet's), and only when there is one: no other
// credentials are looked for. Recording is best effort
// (kubeapi.EventRecorder): a failure is a warning in the log, never the
// command's, and all of a command's Events add at most
// kubeapi.EventBudget (5 s) to it. A dry run records none.

// The reasons of the Events (docs/apply.md, "Events on the Nodes").
const (
	// EventPartitionApplied (Normal): apply changed the partition: which
	// generation, and what (its slice, its kubelet's configuration, the
	// units it started or restarted).
	EventPartitionApplied = "PartitionApplied"
	// EventDrainStarted (Normal): the Node is cordoned and its pods are
	// being evicted; how many, within what time, and why.
	EventDrainStarted = "DrainStarted"
	// EventDrained (Normal): every pod to evict is gone; how many were
	// evicted, in how long.
	EventDrained = "Drained"
	// EventUncordoned (Normal): the Node this command cordoned is
	// schedulable again, and why now.
	EventUncordoned = "Uncordoned"
	// EventDrainFailed (Warning): a drain failed or timed out; the
	// command gives up before it changed the host.
	EventDrainFailed = "DrainFailed"
	// EventApplyFailed (Warning): apply failed and was rolled back (or gave
	// up before it changed the host), naming the error.
	EventApplyFailed = "ApplyFailed"
	// EventPartitionRemoved (Normal): the partition is gone (remove, or a
	// plan without it): its kubelet is stopped for good.
	EventPartitionRemoved = "PartitionRemoved"
)

// newEvents is the recorder of one apply or remove on host (the plan's or
// the record's host name, else this machine's); nil, recording nothing,
// for a dry run.
func newEvents(o Options, host string) *kubeapi.EventRecorder {
	if o.DryRun || o.Offline {
		return nil
	}
	if host == "" {
		host, _ = os.Hostname()
	}
	return &kubeapi.EventRecorder{Host: host, Log: o.Log, Now: o.Now}
}

// event records on target i's Node, with the client its check used.
func (n *nodeRun) event(ctx context.Context, i int, eventType, reason, message string) {
	if n != nil {
		n.eventWith(ctx, n.apis[i], n.removal[i].Node, eventType, reason, message)
	}
}

// eventWith records on Node node with api, when it can create Events.
func (n *nodeRun) eventWith(ctx context.Context, api drain.API, node, eventType, reason, message string) {
	if c, ok := api.(kubeapi.EventPoster); ok && c != nil && n.o.events != nil {
		n.o.events.RecordNodeEvent(ctx, c, node, eventType, reason, "numa-partition "+n.verb+": "+message)
	}
}

// eventOn records on partition p's Node: with the client of p's check
// when p is a target, else with the one nodeRun.client finds for it
// (opened once).
func (n *nodeRun) eventOn(ctx context.Context, p RecordPartition, eventType, reason, message string) {
	if n == nil || n.o.events == nil || p.NodeName == "" {
		return
	}
	if i := slices.IndexFunc(n.removal, func(r NodeRemoval) bool { return r.Partition == p.Name }); i >= 0 {
		n.event(ctx, i, eventType, reason, message)
		return
	}
	api, ok := n.eventClients[p.Name]
	if !ok {
		api = n.eventClient(p)
		if n.eventClients == nil {
			n.eventClients = map[string]drain.API{}
		}
		n.eventClients[p.Name] = api
	}
	n.eventWith(ctx, api, p.NodeName, eventType, reason, message)
}

// eventClient is the client nodeRun.client finds for partition p, which
// this command did not check (a partition it changes without disrupting
// its Node); nil, logged, when there is none. A run without targets
// opened no admin client: it is opened here (it changes nothing else of
// such a run, which has no Node to delete or report).
func (n *nodeRun) eventClient(p RecordPartition) drain.API {
	log := n.o.Log.With("partition", p.Name, "node", p.NodeName)
	if n.admin == nil && n.o.Nodes.Kubeconfig != "" {
		cfg, err := kubeapi.Load("/", n.o.Nodes.Kubeconfig)
		if err != nil {
			log.Warn("not recording Events on the Node", "err", err)
			return nil
		}
		n.admin = kubeapi.NewClient(cfg, kubeapi.Options{})
	}
	api, _, note, err := n.client(p)
	switch {
	case err != nil:
		log.Warn("not recording Events on the Node", "err", err)
		return nil
	case api == nil:
		log.Debug("not recording Events on the Node", "why", note)
		return nil
	}
	return api
}

// why says, for an Event, why the command disrupts target t's Node.
func (t nodeTarget) why() string {
	switch t.Reason {
	case ReasonFreshState:
		return t.Unit + " restarts on fresh CPU/Memory Manager state"
	case ReasonNamespaceRebuilt:
		return t.Unit + " restarts and re-creates the partition's pods"
	case ReasonPartitionGone:
		return "partition " + t.Name + " goes"
	}
	return "partition " + t.Name + " is removed"
}

// drainStarted is the DrainStarted Event's message for p, of target t.
func drainStarted(t nodeTarget, p drain.Progress, timeout time.Duration) string {
	return fmt.Sprintf("cordoned, evicting %d pods within %s (%s)", p.Total, timeout, t.why())
}

// drained is the Drained Event's message for res.
func drained(res *drain.Result) string {
	return fmt.Sprintf("drained: %d pods evicted in %s", res.Evicted, (time.Duration(res.Seconds * float64(time.Second))).Round(100*time.Millisecond))
}

// removed records PartitionRemoved on the Node of each target that goes,
// once its kubelet is stopped (generation is the one removed or
// replaced): the Node is deleted next with an identity allowed to, else
// stays.
func (n *nodeRun) removed(ctx context.Context, generation int) {
	if n == nil {
		return
	}
	for i, t := range n.targets {
		if !t.goes() {
			continue
		}
		next := "the Node stays, NotReady (" + n.verb + " --kubeconfig deletes it, an identity examples/drain-rbac.yaml allows)"
		if n.admin != nil && !slices.Contains(n.keep, t.NodeName) {
			next = "the Node is deleted next"
		}
		n.event(ctx, i, corev1.EventTypeNormal, EventPartitionRemoved, fmt.Sprintf("partition %s removed (generation %d), its kubelet stopped for good; %s", t.Name, generation, next))
	}
}

// applied records PartitionApplied on the Node of each partition of the
// new record whose changes are in changes (partitionChanges).
func (n *nodeRun) applied(ctx context.Context, partitions []RecordPartition, changes map[string][]string, generation int) {
	for _, p := range partitions {
		if c := changes[p.Name]; len(c) > 0 {
			n.eventOn(ctx, p, corev1.EventTypeNormal, EventPartitionApplied, fmt.Sprintf("applied generation %d: %s", generation, strings.Join(c, ", ")))
		}
	}
}

// applyFailed records ApplyFailed on the Nodes of the targets and of the
// other partitions with changes (partitionChanges).
func (n *nodeRun) applyFailed(ctx context.Context, partitions []RecordPartition, changes map[string][]string, message string) {
	if n == nil {
		return
	}
	for i := range n.targets {
		n.event(ctx, i, corev1.EventTypeWarning, EventApplyFailed, message)
	}
	for _, p := range partitions {
		if len(changes[p.Name]) > 0 && !slices.ContainsFunc(n.targets, func(t nodeTarget) bool { return t.Name == p.Name }) {
			n.eventOn(ctx, p, corev1.EventTypeWarning, EventApplyFailed, message)
		}
	}
}

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
