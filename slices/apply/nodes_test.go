package apply

import (
	"reflect"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/transaction"
)

// A dry run records no Event: its Nodes' work gets no recorder.
func TestNoEventsInADryRun(t *testing.T) {
	o := Options{DryRun: true}
	o.defaults()
	if o.newEvents("host") != nil || o.nodeCommand().Events != nil {
		t.Error("a dry run's recorder")
	}
	o.DryRun = false
	if o.newEvents("host") == nil {
		t.Error("no recorder for an apply that changes the host")
	}
}

// The partitions whose kubelet the steps start or restart, for
// nodes.SettleCordoned to wait for a Ready since then: a kubelet's, or
// a unit whose restart re-creates its partition's pods ("" for a
// host-wide one); not a unit that does neither.
func TestRestartedPartitions(t *testing.T) {
	d := withHolders(kubeletUnits([]string{"node0", "node1", "node2"}, "s0", "s1", "s2"))
	steps := []transaction.Step{
		{Action: transaction.StartUnit{Unit: "kubelet-node1.service"}},
		{Action: transaction.RestartUnit{Unit: "mountns-node2.service"}},
		{Action: transaction.RestartUnit{Unit: "np-node0.slice"}},
		{Action: transaction.StopUnit{Unit: "kubelet-node0.service"}},
	}
	if got, want := restartedPartitions(steps, d.Units), map[string]bool{"node1": true, "node2": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("restarted %v, want %v", got, want)
	}
	steps = append(steps, transaction.Step{Action: transaction.RestartUnit{Unit: "uplink.service"}})
	if got := restartedPartitions(steps, d.Units); !got[""] {
		t.Errorf("a host-wide unit's restart: %v", got)
	}
}
