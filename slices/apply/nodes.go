package apply

import (
	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// The partitions' Nodes that apply and remove disrupt are package nodes'
// work: cordon, drain, delete, let back in, and the Events on them. This
// package decides which Nodes a change disrupts (affectedNodes, from the
// steps) and what it changed of each partition (partitionChanges), and
// hands nodes those as data; nodes knows no step.

// nodeCommand is what the Nodes' work takes of o.
func (o Options) nodeCommand() nodes.Command {
	return nodes.Command{Root: o.Root, DryRun: o.DryRun, Nodes: o.Nodes, Log: o.Log, Events: o.events}
}

// newEvents is the recorder of one apply or remove on host (the plan's or
// the record's host name, else this machine's); nil, recording nothing,
// for a dry run.
func (o Options) newEvents(host string) *kubeapi.EventRecorder {
	if o.DryRun || o.Offline {
		return nil
	}
	return nodes.NewEvents(host, o.Log, o.Now)
}

// restartedPartitions are the partitions whose kubelet steps (re)start,
// for nodes.SettleCordoned: a kubelet, or a unit whose restart re-creates
// its partition's pods; key "" when a host-wide unit's does it for every
// partition.
func restartedPartitions(steps []transaction.Step, units []bundle.Unit) map[string]bool {
	restarted := map[string]bool{}
	for _, s := range steps {
		unit, ok := s.StartedUnit()
		if !ok {
			continue
		}
		for _, u := range units {
			if u.Name == unit && (u.KubeletState != nil || u.RecreatesPods) {
				restarted[u.Partition] = true // "": every partition's kubelet
			}
		}
	}
	return restarted
}
