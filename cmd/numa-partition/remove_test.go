package main

import (
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/apply"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
)

// TestNodeRemovalLine: remove's table line per partition's Node.
func TestNodeRemovalLine(t *testing.T) {
	pod := func(name string, a drain.Action, reason string) drain.Decision {
		return drain.Decision{PodRef: drain.PodRef{Namespace: "ns", Name: name}, Action: a, Reason: reason}
	}
	for _, c := range []struct {
		n    nodes.Removal
		want string
	}{
		{nodes.Removal{Partition: "old", Note: "the record has no Node name"}, "partition old: the record has no Node name"},
		{nodes.Removal{Partition: "node0", Node: "h-node0", Note: "/etc/k.conf does not exist: the kubelet never joined, there is no Node to check"},
			"partition node0, Node h-node0: /etc/k.conf does not exist: the kubelet never joined, there is no Node to check"},
		{nodes.Removal{Partition: "node0", Node: "h-node0", Checked: true, Pods: []drain.Decision{pod("ds", drain.Skip, drain.ReasonDaemonSet)}},
			"partition node0, Node h-node0: 1 pods bound; not evicted: ns/ds (DaemonSet); left in the API server"},
		{nodes.Removal{Partition: "node0", Node: "h-node0", Checked: true, Deleted: true,
			Pods:  []drain.Decision{pod("ds", drain.Skip, drain.ReasonDaemonSet), pod("web", drain.Evict, "")},
			Drain: &drain.Result{Registered: true, Evicted: 1, Seconds: 2.5}},
			"partition node0, Node h-node0: drained in 2.5s (1 evicted); not evicted: ns/ds (DaemonSet); deleted"},
		{nodes.Removal{Partition: "node1", Node: "h-node1", Checked: true, Deleted: true, Drain: &drain.Result{}},
			"partition node1, Node h-node1: not registered, nothing to drain; deleted"},
	} {
		if got := nodeRemovalLine(c.n); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// TestNodeChangeLine: apply's table line per Node it disrupts: why, the
// actions, and (unless a dry run) how they went.
func TestNodeChangeLine(t *testing.T) {
	for _, c := range []struct {
		n    nodes.Removal
		want string
	}{
		{nodes.Removal{Partition: "node0", Node: "h-node0", Reason: nodes.ReasonFreshState, Checked: true,
			Actions: []string{"cordon", "evict 1 pods (ns/web)", "uncordon once Ready"}},
			"partition node0 (its kubelet restarts on fresh manager state), Node h-node0: cordon; evict 1 pods (ns/web); uncordon once Ready"},
		{nodes.Removal{Partition: "node0", Node: "h-node0", Reason: nodes.ReasonFreshState, Checked: true, Uncordoned: true,
			Actions: []string{"cordon"}, Drain: &drain.Result{Registered: true, Evicted: 1, Seconds: 1.5}},
			"partition node0 (its kubelet restarts on fresh manager state), Node h-node0: cordon — drained in 1.5s (1 evicted), uncordoned"},
		{nodes.Removal{Partition: "old", Node: "h-old", Reason: nodes.ReasonPartitionGone, Deleted: true, Actions: []string{"delete Node h-old once its kubelet is stopped"}},
			"partition old (the partition goes), Node h-old: delete Node h-old once its kubelet is stopped — deleted"},
		{nodes.Removal{Partition: "old", Reason: nodes.ReasonPartitionGone, Note: "the record has no Node name"},
			"partition old (the partition goes): the record has no Node name"},
	} {
		if got := nodeChangeLine(c.n); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// TestRemoveReportListsKeptFiles (#38, item 2): a file remove kept
// because it is no longer what apply wrote is in the table too, not
// only in the warnings.
func TestRemoveReportListsKeptFiles(t *testing.T) {
	var b strings.Builder
	rep := &apply.RemoveReport{Generation: 3, Actions: []string{"delete /etc/systemd/system/node0.slice"},
		Kept: []apply.KeptFile{{Path: "/etc/systemd/system/kubelet-node0.service", Reason: "changed after apply (…)"}}}
	if err := writeRemoveReport(&b, rep); err != nil {
		t.Fatal(err)
	}
	if want := "  keep /etc/systemd/system/kubelet-node0.service: changed after apply (…)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("table:\n%s\nlacks %q", b.String(), want)
	}
}
