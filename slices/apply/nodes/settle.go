package nodes

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// SettleCordoned lets go of the Nodes rec.Cordoned lists, after an apply
// that succeeded (n is its Node work, nil when it had nothing to change;
// its steps began at started and restarted the kubelets of the
// partitions restarted has, "" for all): those of this apply's drains
// stay listed while Readmit could not uncordon them; those of a partition
// that went are dropped (the Node goes with it); the others, left by an
// interrupted drain, are uncordoned once Ready — after the steps restart
// their kubelet (a heartbeat since then, within the drain timeout) or,
// when their kubelet did not restart, Ready now (no wait: an unrelated
// apply should not block on a Node that is down). It rewrites the record
// when the list changed (write: rec is the record on disk) and returns
// warnings for the Nodes that stay cordoned.
func SettleCordoned(ctx context.Context, cmd Command, rec *record.Record, n *Run, restarted map[string]bool, started time.Time, write bool) []string {
	var warnings, kept []string
	admin, err := newRun(cmd, "apply", nil)
	if err != nil {
		return []string{"the Nodes an interrupted drain left cordoned stay so: " + err.Error()}
	}
	defer admin.Close()
	var left []record.CordonedNode
	for _, c := range rec.Cordoned {
		if i := slices.IndexFunc(n.Removals(), func(r Removal) bool { return r.Node == c.Node }); i >= 0 {
			if r := n.removal[i]; !n.targets[i].Goes() && r.Drain != nil && r.Drain.Cordoned {
				left = append(left, c) // readmit warned
			}
			continue
		}
		i := slices.IndexFunc(rec.Partitions, func(p record.Partition) bool { return p.Name == c.Partition && p.NodeName == c.Node })
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
			since, timeout = started, cmd.Nodes.EffectiveTimeout()
		}
		if err := waitReady(ctx, api, c.Node, since, timeout, cmd.Nodes.EffectivePoll()); err != nil {
			stay(err.Error())
			continue
		}
		if err := api.SetUnschedulable(ctx, c.Node, false); err != nil {
			stay(fmt.Sprintf("uncordoning: %v", err))
			continue
		}
		admin.eventWith(ctx, api, c.Node, corev1.EventTypeNormal, EventUncordoned, "uncordoned: Ready, after an interrupted drain left it cordoned")
		cmd.Log.Info("uncordoned a Node an interrupted drain left cordoned", "partition", p.Name, "node", c.Node)
	}
	if len(kept) > 0 {
		warnings = append(warnings, fmt.Sprintf("the next apply uncordons %s once Ready (or kubectl uncordon)", drain.Name(kept)))
	}
	if write && !slices.Equal(left, rec.Cordoned) {
		rec.Cordoned = left
		if err := rec.Write(cmd.Root); err != nil {
			warnings = append(warnings, "writing which Nodes stay cordoned into the record: "+err.Error())
		}
	}
	return warnings
}

// Removals are what n did with each target's Node, in the targets'
// order (remove's report); none for a nil n.
func (n *Run) Removals() []Removal {
	if n == nil {
		return nil
	}
	return n.removal
}
