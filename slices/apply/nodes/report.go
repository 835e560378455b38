package nodes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// Report is the Removals of an apply, each with what apply does (or,
// in a dry run, would do) with the Node.
func (n *Run) Report() []Removal {
	out := []Removal{}
	if n == nil {
		return out
	}
	for i, r := range n.removal {
		deletes := n.admin != nil && !slices.Contains(n.keep, r.Node)
		r.Actions = nodeActions(n.targets[i], r, n.c.Nodes.Drain, deletes)
		out = append(out, r)
	}
	return out
}

// nodeActions are what apply does with target t's Node, in order, given
// what its check found (r), whether it is drained (drains) and whether
// it is deleted once its partition is gone (deletes): the dry run's
// listing. It is pure.
func nodeActions(t Target, r Removal, drains, deletes bool) []string {
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
	case ReasonNewSoftware:
		return append(out, "restart on the new executables ("+t.Software+")", "uncordon once Ready")
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

// Adopt counts as this apply's own cordon that of a Node a killed apply
// cordoned (in cordoned, from the record) and this one drained again: the
// drain found it cordoned already, and without adopting it this apply
// would leave it so.
func (n *Run) Adopt(cordoned []record.CordonedNode) {
	for i := range n.removal {
		r := &n.removal[i]
		if r.Drain != nil && r.Drain.Registered && !r.Drain.Cordoned &&
			slices.Contains(cordoned, record.CordonedNode{Partition: r.Partition, Node: r.Node}) {
			r.Drain.Cordoned = true
		}
	}
}
