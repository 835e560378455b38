package apply

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// Which partitions' Nodes an apply disrupts (#25 step 2), decided from
// its steps; what is done with them (check, drain, uncordon, delete) is
// package nodes', shared with remove. An apply that only changes what a running
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
//     when the partition's hugepage view changes;
//   - ReasonNewSoftware: its kubelet or containerd moves to another
//     executable (newSoftware), which only apply --drain drains for.
//
// A partition is one target, for the first of these reasons that holds.
//
// next are the plan's partitions (recordPartitions): a partition's Node
// and credentials are the record's, the ones in use, else next's. It is
// pure.
func affectedNodes(d transaction.Desired, cur transaction.Current, steps []transaction.Step, next []record.Partition, reset bool) []nodes.Target {
	planned := map[string]record.Partition{}
	for _, u := range d.Units {
		if u.Partition != "" {
			planned[u.Partition] = record.Partition{Name: u.Partition}
		}
	}
	for _, p := range next {
		planned[p.Name] = p
	}
	fresh := map[string]string{} // partition → its kubelet unit
	if !reset {
		for _, unit := range transaction.PinnedKubelets(d, cur) {
			fresh[unit.Partition] = unit.Name
		}
	}
	rebuilt := rebuiltNamespaces(d, steps)
	var out []nodes.Target
	seen := map[string]bool{}
	if cur.Record != nil {
		for _, p := range cur.Record.Partitions {
			seen[p.Name] = true
			np, kept := planned[p.Name]
			if !kept || (np.NodeName != "" && p.NodeName != "" && np.NodeName != p.NodeName) {
				out = append(out, nodes.Target{Partition: p, Reason: nodes.ReasonPartitionGone})
				continue
			}
			t := nodes.Target{Partition: p}
			rebuiltBy, software := cmp.Or(rebuilt[p.Name], rebuilt[""]), newSoftware(p, np)
			switch {
			case fresh[p.Name] != "":
				t.Reason, t.Unit = nodes.ReasonFreshState, fresh[p.Name]
			case rebuiltBy != "":
				t.Reason, t.Unit = nodes.ReasonNamespaceRebuilt, rebuiltBy
			case software != "":
				t.Reason, t.Unit, t.Software = nodes.ReasonNewSoftware, kubeletOf(d, p.Name), software
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
			out = append(out, nodes.Target{Partition: planned[u.Partition], Reason: nodes.ReasonFreshState, Unit: u.Name})
		}
	}
	return out
}

// newSoftware says which of the partition's daemons move to another
// executable from the applied record's was to the plan's next, as
// "kubelet OLD → NEW" (and containerd's); "" when neither does, or when
// was is a record from before the executables were recorded.
func newSoftware(was, next record.Partition) string {
	var moves []string
	for _, d := range []struct{ name, was, next string }{
		{"kubelet", was.KubeletBinary, next.KubeletBinary},
		{"containerd", was.ContainerdBinary, next.ContainerdBinary},
	} {
		if d.was != "" && d.next != "" && d.was != d.next {
			moves = append(moves, d.name+" "+d.was+" → "+d.next)
		}
	}
	return strings.Join(moves, ", ")
}

// kubeletOf is the partition's kubelet unit in d (the one with manager
// state: every kubelet's), "" when d has none.
func kubeletOf(d transaction.Desired, partition string) string {
	for _, u := range d.Units {
		if u.Partition == partition && u.KubeletState != nil {
			return u.Name
		}
	}
	return ""
}

// rebuiltNamespaces are the partitions whose pods steps re-create, each
// with the unit whose restart does it; key "" when a host-wide unit's
// restart re-creates every partition's. A unit that starts (it was not
// running) re-creates nothing: its pods were gone already.
func rebuiltNamespaces(d transaction.Desired, steps []transaction.Step) map[string]string {
	out := map[string]string{}
	for _, s := range steps {
		r, ok := s.Action.(transaction.RestartUnit)
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
func rebuiltWarning(t nodes.Target) string {
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
func waitKubeletsLetGo(ctx context.Context, o Options, d transaction.Desired, cur transaction.Current) (transaction.Current, error) {
	timeout := o.Nodes.EffectiveTimeout()
	deadline := time.Now().Add(timeout)
	for {
		held := transaction.PinnedKubelets(d, cur)
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
		t := time.NewTimer(o.Nodes.EffectivePoll())
		select {
		case <-ctx.Done():
			t.Stop()
			return cur, fmt.Errorf("waiting for the kubelets to let go of the drained pods: %w", ctx.Err())
		case <-t.C:
		}
		states, err := transaction.GatherKubeletState(o.Root, d)
		if err != nil {
			return cur, err
		}
		cur.KubeletStates = states
	}
}
