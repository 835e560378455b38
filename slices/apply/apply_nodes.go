package apply

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// Which partitions' Nodes an apply disrupts (#25 step 2), and what it
// does with them; the machinery (check, drain, uncordon, delete) is
// remove's, in nodes.go. An apply that only changes what a running
// kubelet does not pin (a slice's CPUs, a file) disrupts no Node: only
// these do.

// affectedNodes are the partitions whose Nodes an apply from cur to d
// disrupts, in the applied record's order, then the plan's:
//
//   - ReasonPartitionGone: a partition of the applied record the plan no
//     longer has (another layout, a rename), or whose Node name changes:
//     its units are removed, its kubelet stops for good, and the pods
//     bound to its Node are stranded;
//   - ReasonFreshState: a kubelet that restarts on fresh CPU and Memory
//     Manager state while that state holds pods it still runs (the ones
//     checkKubeletStates refuses), unless reset says to restart it with
//     them running;
//   - ReasonNamespaceRebuilt: steps restart a unit that re-creates every
//     pod of the partition (bundle.Unit.RecreatesPods: the mount
//     namespace holder, or a network unit it is part of), for instance
//     when the partition's hugepage view changes.
//
// next are the plan's partitions (recordPartitions): a partition's Node
// and credentials are the record's, the ones in use, else next's. It is
// pure.
func affectedNodes(d Desired, cur Current, steps []Step, next []RecordPartition, reset bool) []nodeTarget {
	planned := map[string]RecordPartition{}
	for _, u := range d.Units {
		if u.Partition != "" {
			planned[u.Partition] = RecordPartition{Name: u.Partition}
		}
	}
	for _, p := range next {
		planned[p.Name] = p
	}
	fresh := map[string]string{} // partition → its kubelet unit
	if !reset {
		for _, unit := range pinnedKubelets(d, cur) {
			fresh[unit.Partition] = unit.Name
		}
	}
	rebuilt := rebuiltNamespaces(d, steps)
	var out []nodeTarget
	seen := map[string]bool{}
	if cur.Record != nil {
		for _, p := range cur.Record.Partitions {
			seen[p.Name] = true
			np, kept := planned[p.Name]
			if !kept || (np.NodeName != "" && p.NodeName != "" && np.NodeName != p.NodeName) {
				out = append(out, nodeTarget{RecordPartition: p, Reason: ReasonPartitionGone})
				continue
			}
			t := nodeTarget{RecordPartition: p}
			switch {
			case fresh[p.Name] != "":
				t.Reason, t.Unit = ReasonFreshState, fresh[p.Name]
			case cmp.Or(rebuilt[p.Name], rebuilt[""]) != "":
				t.Reason, t.Unit = ReasonNamespaceRebuilt, cmp.Or(rebuilt[p.Name], rebuilt[""])
			default:
				continue
			}
			if t.NodeName == "" { // a record from before Node names: the plan knows
				t.NodeName, t.Kubeconfig = np.NodeName, np.Kubeconfig
			}
			out = append(out, t)
		}
	}
	// A stamped kubelet of a partition the record lacks (a record
	// written by hand, or lost): the plan's Node.
	for _, u := range d.Units {
		if fresh[u.Partition] == u.Name && !seen[u.Partition] {
			seen[u.Partition] = true
			out = append(out, nodeTarget{RecordPartition: planned[u.Partition], Reason: ReasonFreshState, Unit: u.Name})
		}
	}
	return out
}

// rebuiltNamespaces are the partitions whose pods steps re-create, each
// with the unit whose restart does it; key "" when a host-wide unit's
// restart re-creates every partition's. A unit that starts (it was not
// running) re-creates nothing: its pods were gone already.
func rebuiltNamespaces(d Desired, steps []Step) map[string]string {
	out := map[string]string{}
	for _, s := range steps {
		r, ok := s.Action.(RestartUnit)
		if !ok {
			continue
		}
		i := slices.IndexFunc(d.Units, func(u bundle.Unit) bool { return u.Name == r.Unit })
		if i < 0 || !d.Units[i].RecreatesPods {
			continue
		}
		if _, ok := out[d.Units[i].Partition]; !ok {
			out[d.Units[i].Partition] = r.Unit
		}
	}
	return out
}

// rebuiltWarning says, for an apply without --drain, that t's restart
// re-creates the pods of t's Node, and how to drain it first.
func rebuiltWarning(t nodeTarget) string {
	node := "its Node"
	if t.NodeName != "" {
		node = "Node " + t.NodeName
	}
	return fmt.Sprintf("partition %s: %s restarts (its files changed) and rebuilds the partition's mount namespace: containerd and kubelet restart in the new one and every pod of %s is re-created, without a drain; apply --drain drains %s first and uncordons it once Ready",
		t.Name, t.Unit, node, node)
}

// waitKubeletsLetGo re-reads the kubelets' manager state, after their
// Nodes were drained, until none that must restart on fresh state holds
// pods it still runs (kubelet removes a pod's directory once the pod is
// gone and cleaned up), for at most the drain timeout. It returns cur
// with the state as last read.
func waitKubeletsLetGo(ctx context.Context, o Options, d Desired, cur Current) (Current, error) {
	timeout := o.Nodes.timeout()
	deadline := time.Now().Add(timeout)
	for {
		held := pinnedKubelets(d, cur)
		if len(held) == 0 {
			return cur, nil
		}
		if !time.Now().Before(deadline) {
			var msgs []string
			for _, u := range held {
				st := cur.KubeletStates[u.Name]
				msgs = append(msgs, fmt.Sprintf("partition %s: %s still holds the exclusive CPUs or pinned memory of %d running pods (%s) %s after its Node was drained",
					u.Partition, u.Name, len(st.Pinned), strings.Join(st.Pinned, ", "), timeout))
			}
			return cur, fmt.Errorf("%s (pods a drain does not evict, DaemonSet and static pods, keep theirs: apply --reset-kubelet-state restarts it regardless)", strings.Join(msgs, "\n"))
		}
		t := time.NewTimer(o.Nodes.poll())
		select {
		case <-ctx.Done():
			t.Stop()
			return cur, fmt.Errorf("waiting for the kubelets to let go of the drained pods: %w", ctx.Err())
		case <-t.C:
		}
		states, err := gatherKubeletState(o.Root, d)
		if err != nil {
			return cur, err
		}
		cur.KubeletStates = states
	}
}

// report is the NodeRemovals of an apply, each with what apply does (or,
// in a dry run, would do) with the Node.
func (n *nodeRun) report() []NodeRemoval {
	out := []NodeRemoval{}
	if n == nil {
		return out
	}
	for i, r := range n.removal {
		deletes := n.admin != nil && !slices.Contains(n.keep, r.Node)
		r.Actions = nodeActions(n.targets[i], r, n.o.Nodes.Drain, deletes)
		out = append(out, r)
	}
	return out
}

// nodeActions are what apply does with target t's Node, in order, given
// what its check found (r), whether it is drained (drains) and whether
// it is deleted once its partition is gone (deletes): the dry run's
// listing. It is pure.
func nodeActions(t nodeTarget, r NodeRemoval, drains, deletes bool) []string {
	var out []string
	pods := func(a drain.Action) (names []string) {
		for _, d := range r.Pods {
			if d.Action == a {
				s := d.String()
				if a == drain.Refuse {
					s += " (" + d.Reason + ")"
				}
				names = append(names, s)
			}
		}
		return names
	}
	switch {
	case !r.Checked:
		// r.Note says why it was not asked about.
	case drains:
		out = append(out, "cordon")
		if ev := pods(drain.Evict); len(ev) > 0 {
			out = append(out, fmt.Sprintf("evict %d pods (%s)", len(ev), drain.Name(ev)))
		}
		for _, b := range r.Budgets {
			if b.Budget == "" { // not readable with these credentials
				out = append(out, fmt.Sprintf("evictions of %s gated by unknown budgets (%s)", drain.Name(b.Pods), b.Detail))
				continue
			}
			out = append(out, fmt.Sprintf("evictions of %s gated by PodDisruptionBudget %s (%s)", drain.Name(b.Pods), b.Budget, b.Detail))
		}
		if ref := pods(drain.Refuse); len(ref) > 0 {
			out = append(out, fmt.Sprintf("refused: %d pods may not be evicted (%s)", len(ref), drain.Name(ref)))
		}
	default:
		if msg := bound(r); msg != "" {
			out = append(out, "strand "+strings.TrimPrefix(msg, "partition "+r.Partition+": "))
		}
	}
	switch t.Reason {
	case ReasonFreshState:
		return append(out, "wait until "+t.Unit+"'s manager state holds no running pods",
			"restart "+t.Unit+" on fresh CPU/Memory Manager state", "uncordon once Ready")
	case ReasonNamespaceRebuilt:
		return append(out, "restart "+t.Unit+": containerd and kubelet restart in a new mount namespace, and every pod left on the Node is re-created",
			"uncordon once Ready")
	}
	switch {
	case r.Node == "":
		return out
	case deletes:
		return append(out, "delete Node "+r.Node+" once its kubelet is stopped")
	default:
		return append(out, "leave Node "+r.Node+" in the API server, NotReady")
	}
}

// adopt counts as this apply's own cordon that of a Node a killed apply
// cordoned (in cordoned, from the record) and this one drained again: the
// drain found it cordoned already, and without adopting it this apply
// would leave it so.
func (n *nodeRun) adopt(cordoned []CordonedNode) {
	for i := range n.removal {
		r := &n.removal[i]
		if r.Drain != nil && r.Drain.Registered && !r.Drain.Cordoned &&
			slices.Contains(cordoned, CordonedNode{Partition: r.Partition, Node: r.Node}) {
			r.Drain.Cordoned = true
		}
	}
}

// settleCordoned lets go of the Nodes rec.Cordoned lists, after an apply
// that succeeded (n is its Node work, nil when it had nothing to change;
// steps its steps, begun at started): those of this apply's drains stay
// listed while readmit could not uncordon them; those of a partition
// that went are dropped (the Node goes with it); the others, left by an
// interrupted drain, are uncordoned once Ready — after the steps restart
// their kubelet (a heartbeat since then, within the drain timeout) or,
// when their kubelet did not restart, Ready now (no wait: an unrelated
// apply should not block on a Node that is down). It rewrites the record
// when the list changed (write: rec is the record on disk) and returns
// warnings for the Nodes that stay cordoned.
func settleCordoned(ctx context.Context, o Options, rec *Record, n *nodeRun, steps []Step, units []bundle.Unit, started time.Time, write bool) []string {
	var warnings, kept []string
	admin, err := newNodeRun(o, "apply", nil)
	if err != nil {
		return []string{"the Nodes an interrupted drain left cordoned stay so: " + err.Error()}
	}
	defer admin.close()
	restarted := map[string]bool{}
	for _, s := range steps {
		unit, ok := s.startedUnit()
		if !ok {
			continue
		}
		for _, u := range units {
			if u.Name == unit && (u.KubeletState != nil || u.RecreatesPods) {
				restarted[u.Partition] = true // "": every partition's kubelet
			}
		}
	}
	var left []CordonedNode
	for _, c := range rec.Cordoned {
		if i := slices.IndexFunc(n.removalList(), func(r NodeRemoval) bool { return r.Node == c.Node }); i >= 0 {
			if r := n.removal[i]; !n.targets[i].goes() && r.Drain != nil && r.Drain.Cordoned {
				left = append(left, c) // readmit warned
			}
			continue
		}
		i := slices.IndexFunc(rec.Partitions, func(p RecordPartition) bool { return p.Name == c.Partition && p.NodeName == c.Node })
		if i < 0 {
			continue // its partition went, and its Node with it
		}
		p := rec.Partitions[i]
		stay := func(why string) {
			left, kept = append(left, c), append(kept, c.Node)
			warnings = append(warnings, fmt.Sprintf("partition %s: Node %s, which an interrupted drain left cordoned, stays cordoned: %s", p.Name, c.Node, why))
		}
		api, _, note, err := admin.client(p)
		switch {
		case err != nil:
			stay(err.Error())
			continue
		case api == nil:
			stay(note)
			continue
		}
		since, timeout := time.Time{}, time.Duration(0)
		if restarted[p.Name] || restarted[""] {
			since, timeout = started, o.Nodes.timeout()
		}
		if err := waitReady(ctx, api, c.Node, since, timeout, o.Nodes.poll()); err != nil {
			stay(err.Error())
			continue
		}
		if err := api.SetUnschedulable(ctx, c.Node, false); err != nil {
			stay(fmt.Sprintf("uncordoning: %v", err))
			continue
		}
		admin.eventWith(ctx, api, c.Node, corev1.EventTypeNormal, EventUncordoned, "uncordoned: Ready, after an interrupted drain left it cordoned")
		o.Log.Info("uncordoned a Node an interrupted drain left cordoned", "partition", p.Name, "node", c.Node)
	}
	if len(kept) > 0 {
		warnings = append(warnings, fmt.Sprintf("the next apply uncordons %s once Ready (or kubectl uncordon)", drain.Name(kept)))
	}
	if write && !slices.Equal(left, rec.Cordoned) {
		rec.Cordoned = left
		if err := rec.Write(o.Root); err != nil {
			warnings = append(warnings, "writing which Nodes stay cordoned into the record: "+err.Error())
		}
	}
	return warnings
}

// removalList is n's NodeRemovals; none for a nil n.
func (n *nodeRun) removalList() []NodeRemoval {
	if n == nil {
		return nil
	}
	return n.removal
}
