package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// Which Nodes an apply disrupts (apply_nodes.go), a pure decision, and
// the wait for the drained kubelets; what is done with those Nodes is
// package nodes' (its tests run it against the fake API server), apply on
// a host the sandbox tests'.

// kubeletUnits are a Desired's units of partitions names: a slice and a
// kubelet each, the kubelet's managers now under settings[i].
func kubeletUnits(names []string, settings ...string) transaction.Desired {
	var d transaction.Desired
	for i, p := range names {
		d.Units = append(d.Units, bundle.Unit{Name: "np-" + p + ".slice", Partition: p},
			bundle.Unit{Name: "kubelet-" + p + ".service", Partition: p,
				KubeletState: &bundle.KubeletState{Dir: "var/lib/kubelet-" + p, Settings: settings[i]}})
	}
	return d
}

// withHolders adds to d a mount namespace holder per partition and a
// host-wide uplink, the units whose restart re-creates pods.
func withHolders(d transaction.Desired) transaction.Desired {
	parts := map[string]bool{}
	for _, u := range d.Units {
		if u.Partition != "" && !parts[u.Partition] {
			parts[u.Partition] = true
			d.Units = append(d.Units, bundle.Unit{Name: "mountns-" + u.Partition + ".service", Partition: u.Partition, RecreatesPods: true})
		}
	}
	d.Units = append(d.Units, bundle.Unit{Name: "uplink.service", RecreatesPods: true})
	return d
}

func targetStrings(ts []nodes.Target) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, strings.TrimSuffix(fmt.Sprintf("%s:%s:%s:%s:%s", t.Name, t.Reason, t.NodeName, t.Unit, t.Software), ":"))
	}
	return out
}

// TestAffectedNodes: the pure decision of which partitions' Nodes an
// apply disrupts.
func TestAffectedNodes(t *testing.T) {
	prev := &record.Record{Partitions: []record.Partition{
		{Name: "node0", NodeName: "host-node0", Kubeconfig: "/k0"},
		{Name: "node1", NodeName: "host-node1", Kubeconfig: "/k1"},
		{Name: "old", NodeName: "host-old", Kubeconfig: "/kold"},
	}}
	next := []record.Partition{{Name: "node0", NodeName: "host-node0"}, {Name: "node1", NodeName: "host-node1"}}
	pinned := func(stamp string, pods ...string) transaction.KubeletStateOnHost {
		return transaction.KubeletStateOnHost{Stamp: stamp, Files: []string{"var/lib/x/cpu_manager_state"}, Pinned: pods}
	}
	for _, tc := range []struct {
		name   string
		d      transaction.Desired
		states map[string]transaction.KubeletStateOnHost
		steps  []transaction.Step
		rec    *record.Record
		next   []record.Partition
		reset  bool
		want   []string
	}{{
		name: "kubelet with pods pinned restarts on fresh state; a partition goes",
		d:    kubeletUnits([]string{"node0", "node1"}, "new", "s1"),
		states: map[string]transaction.KubeletStateOnHost{
			"kubelet-node0.service": pinned("old", "uid-a"),
			"kubelet-node1.service": pinned("s1", "uid-b"), // settings unchanged: untouched
		},
		rec: prev, next: next,
		want: []string{"node0:freshKubeletState:host-node0:kubelet-node0.service", "old:partitionGone:host-old:"},
	}, {
		name:   "--reset-kubelet-state keeps the pods running: only the partition that goes",
		d:      kubeletUnits([]string{"node0", "node1"}, "new", "s1"),
		states: map[string]transaction.KubeletStateOnHost{"kubelet-node0.service": pinned("old", "uid-a")},
		rec:    prev, next: next, reset: true,
		want: []string{"old:partitionGone:host-old:"},
	}, {
		name:   "state with no running pods: restarted without a drain",
		d:      kubeletUnits([]string{"node0", "node1"}, "new", "s1"),
		states: map[string]transaction.KubeletStateOnHost{"kubelet-node0.service": pinned("old")},
		rec:    prev, next: next,
		want: []string{"old:partitionGone:host-old:"},
	}, {
		name:   "never stamped (the first apply): its files are kept, nothing restarts on fresh state",
		d:      kubeletUnits([]string{"node0", "node1"}, "new", "s1"),
		states: map[string]transaction.KubeletStateOnHost{"kubelet-node0.service": pinned("", "uid-a")},
		rec:    &record.Record{Partitions: prev.Partitions[:2]}, next: next,
		want: []string{},
	}, {
		name:   "the record lost: the plan's Node",
		d:      kubeletUnits([]string{"node0"}, "new"),
		states: map[string]transaction.KubeletStateOnHost{"kubelet-node0.service": pinned("old", "uid-a")},
		next:   next[:1],
		want:   []string{"node0:freshKubeletState:host-node0:kubelet-node0.service"},
	}, {
		name: "a Node rename strands the old Node: it goes, with the record's name",
		d:    kubeletUnits([]string{"node0", "node1"}, "s0", "s1"),
		rec:  &record.Record{Partitions: prev.Partitions[:2]},
		next: []record.Partition{{Name: "node0", NodeName: "host-node0"}, {Name: "node1", NodeName: "renamed-node1"}},
		want: []string{"node1:partitionGone:host-node1:"},
	}, {
		name: "another layout: every recorded partition the plan lacks goes, in record order",
		d:    kubeletUnits([]string{"whole"}, "s"),
		rec:  prev, next: []record.Partition{{Name: "whole", NodeName: "host"}},
		want: []string{"node0:partitionGone:host-node0:", "node1:partitionGone:host-node1:", "old:partitionGone:host-old:"},
	}, {
		name:  "a restarted mount namespace holder re-creates its partition's pods (#25: a hugepage view change)",
		d:     withHolders(kubeletUnits([]string{"node0", "node1"}, "s0", "s1")),
		steps: []transaction.Step{{Action: transaction.RestartUnit{Unit: "mountns-node1.service"}}, {Action: transaction.RestartUnit{Unit: "kubelet-node0.service"}}},
		rec:   &record.Record{Partitions: prev.Partitions[:2]}, next: next,
		want: []string{"node1:namespaceRebuilt:host-node1:mountns-node1.service"},
	}, {
		name:  "a holder that starts (it was down) re-creates nothing: its pods were gone",
		d:     withHolders(kubeletUnits([]string{"node0", "node1"}, "s0", "s1")),
		steps: []transaction.Step{{Action: transaction.StartUnit{Unit: "mountns-node1.service"}}},
		rec:   &record.Record{Partitions: prev.Partitions[:2]}, next: next,
		want: []string{},
	}, {
		name:   "a host-wide unit's restart (the uplink) re-creates every partition's pods; fresh state wins where both",
		d:      withHolders(kubeletUnits([]string{"node0", "node1"}, "new", "s1")),
		states: map[string]transaction.KubeletStateOnHost{"kubelet-node0.service": pinned("old", "uid-a")},
		steps:  []transaction.Step{{Action: transaction.RestartUnit{Unit: "uplink.service"}}},
		rec:    &record.Record{Partitions: prev.Partitions[:2]}, next: next,
		want: []string{"node0:freshKubeletState:host-node0:kubelet-node0.service", "node1:namespaceRebuilt:host-node1:uplink.service"},
	}, {
		name: "a kubelet and a containerd move to other executables (an upgrade's canary); a record without them moves none",
		d:    kubeletUnits([]string{"node0", "node1", "node2"}, "s0", "s1", "s2"),
		rec: &record.Record{Partitions: []record.Partition{
			{Name: "node0", NodeName: "host-node0", KubeletBinary: "/usr/bin/kubelet", ContainerdBinary: "/usr/bin/containerd"},
			{Name: "node1", NodeName: "host-node1", KubeletBinary: "/usr/bin/kubelet", ContainerdBinary: "/usr/bin/containerd"},
			{Name: "node2", NodeName: "host-node2"},
		}},
		next: []record.Partition{
			{Name: "node0", NodeName: "host-node0", KubeletBinary: "/usr/bin/kubelet", ContainerdBinary: "/usr/bin/containerd"},
			{Name: "node1", NodeName: "host-node1", KubeletBinary: "/opt/k8s/kubelet", ContainerdBinary: "/opt/ctr/containerd"},
			{Name: "node2", NodeName: "host-node2", KubeletBinary: "/opt/k8s/kubelet", ContainerdBinary: "/usr/bin/containerd"},
		},
		want: []string{"node1:newSoftware:host-node1:kubelet-node1.service:kubelet /usr/bin/kubelet → /opt/k8s/kubelet, containerd /usr/bin/containerd → /opt/ctr/containerd"},
	}, {
		name:   "fresh state wins over new software: the kubelet restarts on fresh state either way",
		d:      kubeletUnits([]string{"node0"}, "new"),
		states: map[string]transaction.KubeletStateOnHost{"kubelet-node0.service": pinned("old", "uid-a")},
		rec:    &record.Record{Partitions: []record.Partition{{Name: "node0", NodeName: "host-node0", KubeletBinary: "/usr/bin/kubelet"}}},
		next:   []record.Partition{{Name: "node0", NodeName: "host-node0", KubeletBinary: "/opt/k8s/kubelet"}},
		want:   []string{"node0:freshKubeletState:host-node0:kubelet-node0.service"},
	}, {
		name: "no plan (tests): the units' partitions are the plan's",
		d:    kubeletUnits([]string{"node0", "node1"}, "s0", "s1"),
		rec:  prev,
		want: []string{"old:partitionGone:host-old:"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cur := transaction.Current{Record: tc.rec, KubeletStates: tc.states}
			got := targetStrings(affectedNodes(tc.d, cur, tc.steps, tc.next, tc.reset))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestKubeletStateRefusalNamesApplyDrain: without --drain, a kubelet
// whose state holds running pods is refused, and the refusal says that
// apply --drain is the way (and keeps --reset-kubelet-state).
func TestKubeletStateRefusalNamesApplyDrain(t *testing.T) {
	d := kubeletUnits([]string{"node0"}, "new")
	cur := transaction.Current{KubeletStates: map[string]transaction.KubeletStateOnHost{"kubelet-node0.service": {Stamp: "old",
		Files: []string{"var/lib/kubelet-node0/cpu_manager_state"}, Pinned: []string{"uid-a"}}}}
	err := transaction.CheckKubeletStates(d, cur, false)
	for _, want := range []string{"kubelet-node0.service: its CPU and Memory Manager settings change (old → new)", "1 pods (uid-a)",
		"drain partition node0's Node first — apply --drain does", "apply --reset-kubelet-state"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q: %v", want, err)
		}
	}
	if err := transaction.CheckKubeletStates(d, cur, true); err != nil {
		t.Errorf("told to: %v", err)
	}
}

// TestWaitKubeletsLetGo: after a drain apply waits for kubelet to clean
// the evicted pods up (their directories go) before it moves the state
// aside; a pod that stays (a DaemonSet's, which a drain leaves) fails
// the wait, naming it.
func TestWaitKubeletsLetGo(t *testing.T) {
	root := t.TempDir()
	d := kubeletUnits([]string{"node0"}, "new")
	dir := filepath.Join(root, "var/lib/kubelet-node0")
	applytest.Must(t, os.MkdirAll(filepath.Join(dir, "pods", "uid-a"), 0o755))
	applytest.Must(t, os.MkdirAll(filepath.Join(dir, "pods", "uid-b"), 0o755))
	applytest.Must(t, os.WriteFile(filepath.Join(dir, transaction.KubeletStampName), []byte("old\n"), 0o644))
	applytest.Must(t, os.WriteFile(filepath.Join(dir, "cpu_manager_state"), []byte(`{"policyName":"static","entries":{"uid-a":{},"uid-b":{}}}`), 0o600))
	states, err := transaction.GatherKubeletState(root, d)
	applytest.Must(t, err)
	cur := transaction.Current{KubeletStates: states}
	o := Options{Root: root, Nodes: nodes.Options{Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}}
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = os.RemoveAll(filepath.Join(dir, "pods", "uid-a"))
		_ = os.RemoveAll(filepath.Join(dir, "pods", "uid-b"))
	}()
	got, err := waitKubeletsLetGo(context.Background(), o, d, cur)
	if err != nil || len(got.KubeletStates["kubelet-node0.service"].Pinned) != 0 {
		t.Fatalf("let go: %+v %v", got.KubeletStates, err)
	}
	if len(cur.KubeletStates["kubelet-node0.service"].Pinned) != 2 {
		t.Error("the wait changed its caller's state")
	}
	applytest.Must(t, os.MkdirAll(filepath.Join(dir, "pods", "uid-b"), 0o755))
	states, err = transaction.GatherKubeletState(root, d)
	applytest.Must(t, err)
	o.Nodes.Timeout = 50 * time.Millisecond
	_, err = waitKubeletsLetGo(context.Background(), o, d, transaction.Current{KubeletStates: states})
	if err == nil || !strings.HasPrefix(err.Error(), "partition node0: kubelet-node0.service still holds the exclusive CPUs or pinned memory of 1 running pods (uid-b) 50ms after its Node was drained") ||
		!strings.Contains(err.Error(), "apply --reset-kubelet-state") {
		t.Fatalf("a pod that stays: %v", err)
	}
}
