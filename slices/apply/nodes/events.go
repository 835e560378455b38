package nodes

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// Events on the partitions' Nodes (#40): what apply and remove did to
// each partition's Node, where `kubectl describe node` and `kubectl get
// events` show it. Each Event goes through the client the command has for
// that Node (Run.client: --kubeconfig's identity, else the
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

// NewEvents is the recorder of one apply or remove on host (the plan's or
// the record's host name, else this machine's). A dry run records none:
// its Command has no recorder.
func NewEvents(host string, log *slog.Logger, now func() time.Time) *kubeapi.EventRecorder {
	if host == "" {
		host, _ = os.Hostname()
	}
	return &kubeapi.EventRecorder{Host: host, Log: log, Now: now}
}

// event records on target i's Node, with the client its check used.
func (n *Run) event(ctx context.Context, i int, eventType, reason, message string) {
	if n != nil {
		n.eventWith(ctx, n.apis[i], n.removal[i].Node, eventType, reason, message)
	}
}

// eventWith records on Node node with api, when it can create Events.
func (n *Run) eventWith(ctx context.Context, api drain.API, node, eventType, reason, message string) {
	if c, ok := api.(kubeapi.EventPoster); ok && c != nil && n.c.Events != nil {
		n.c.Events.RecordNodeEvent(ctx, c, node, eventType, reason, "numa-partition "+n.verb+": "+message)
	}
}

// eventOn records on partition p's Node: with the client of p's check
// when p is a target, else with the one Run.client finds for it
// (opened once).
func (n *Run) eventOn(ctx context.Context, p record.Partition, eventType, reason, message string) {
	if n == nil || n.c.Events == nil || p.NodeName == "" {
		return
	}
	if i := slices.IndexFunc(n.removal, func(r Removal) bool { return r.Partition == p.Name }); i >= 0 {
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

// eventClient is the client Run.client finds for partition p, which
// this command did not check (a partition it changes without disrupting
// its Node); nil, logged, when there is none. A run without targets
// opened no admin client: it is opened here (it changes nothing else of
// such a run, which has no Node to delete or report).
func (n *Run) eventClient(p record.Partition) drain.API {
	log := n.c.Log.With("partition", p.Name, "node", p.NodeName)
	if n.admin == nil && n.c.Nodes.Kubeconfig != "" {
		cfg, err := kubeapi.Load("/", n.c.Nodes.Kubeconfig)
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
func (t Target) why() string {
	switch t.Reason {
	case ReasonFreshState:
		return t.Unit + " restarts on fresh CPU/Memory Manager state"
	case ReasonNamespaceRebuilt:
		return t.Unit + " restarts and re-creates the partition's pods"
	case ReasonNewSoftware:
		return "new executables: " + t.Software
	case ReasonPartitionGone:
		return "partition " + t.Name + " goes"
	}
	return "partition " + t.Name + " is removed"
}

// drainStarted is the DrainStarted Event's message for p, of target t.
func drainStarted(t Target, p drain.Progress, timeout time.Duration) string {
	return fmt.Sprintf("cordoned, evicting %d pods within %s (%s)", p.Total, timeout, t.why())
}

// drained is the Drained Event's message for res.
func drained(res *drain.Result) string {
	return fmt.Sprintf("drained: %d pods evicted in %s", res.Evicted, (time.Duration(res.Seconds * float64(time.Second))).Round(100*time.Millisecond))
}

// Removed records PartitionRemoved on the Node of each target that goes,
// once its kubelet is stopped (generation is the one removed or
// replaced): the Node is deleted next with an identity allowed to, else
// stays.
func (n *Run) Removed(ctx context.Context, generation int) {
	if n == nil {
		return
	}
	for i, t := range n.targets {
		if !t.Goes() {
			continue
		}
		next := "the Node stays, NotReady (" + n.verb + " --kubeconfig deletes it, an identity examples/drain-rbac.yaml allows)"
		if n.admin != nil && !slices.Contains(n.keep, t.NodeName) {
			next = "the Node is deleted next"
		}
		n.event(ctx, i, corev1.EventTypeNormal, EventPartitionRemoved, fmt.Sprintf("partition %s removed (generation %d), its kubelet stopped for good; %s", t.Name, generation, next))
	}
}

// Applied records PartitionApplied on the Node of each partition of the
// new record whose changes are in changes (slices/apply's partitionChanges).
func (n *Run) Applied(ctx context.Context, partitions []record.Partition, changes map[string][]string, generation int) {
	for _, p := range partitions {
		if c := changes[p.Name]; len(c) > 0 {
			n.eventOn(ctx, p, corev1.EventTypeNormal, EventPartitionApplied, fmt.Sprintf("applied generation %d: %s", generation, strings.Join(c, ", ")))
		}
	}
}

// ApplyFailed records ApplyFailed on the Nodes of the targets and of the
// other partitions with changes (slices/apply's partitionChanges).
func (n *Run) ApplyFailed(ctx context.Context, partitions []record.Partition, changes map[string][]string, message string) {
	if n == nil {
		return
	}
	for i := range n.targets {
		n.event(ctx, i, corev1.EventTypeWarning, EventApplyFailed, message)
	}
	for _, p := range partitions {
		if len(changes[p.Name]) > 0 && !slices.ContainsFunc(n.targets, func(t Target) bool { return t.Name == p.Name }) {
			n.eventOn(ctx, p, corev1.EventTypeWarning, EventApplyFailed, message)
		}
	}
}
