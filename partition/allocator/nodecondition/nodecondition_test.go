package nodecondition

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/slices/drift"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

const mi2 = 2 << 20

var plan = Plan{Slice: "node1.slice", CPUs: bitmask.MustParseCPUList("4-7"), Mems: bitmask.MustParseNodeList("1"),
	Pools: []hugepool.Pool{{Node: 1, PageSize: mi2, Count: 16}}}

func TestVerdict(t *testing.T) {
	asPlanned := Observed{Cpuset: drift.Cpuset{CPUs: "4-7", Mems: "1"}, Nodes: map[int][]numa.Hugepages{1: {{PageSize: mi2, Total: 16}}}}
	cpus := asPlanned
	cpus.Cpuset.CPUs = "4-5"
	pools := asPlanned
	pools.Nodes = map[int][]numa.Hugepages{1: {{PageSize: mi2, Total: 3}}}
	both := cpus
	both.Nodes = pools.Nodes
	unread := Observed{NodesErr: errors.New("open /sys/devices/system/node: permission denied")}
	many := Plan{Slice: plan.Slice, CPUs: plan.CPUs, Mems: plan.Mems}
	for n := range 10 {
		many.Pools = append(many.Pools, hugepool.Pool{Node: n, PageSize: mi2, Count: 1})
	}
	for _, c := range []struct {
		name   string
		plan   Plan
		obs    Observed
		status corev1.ConditionStatus
		reason string
		msg    string
	}{
		{"as planned", plan, asPlanned, corev1.ConditionFalse, ReasonAsPlanned,
			"slice node1.slice runs on the planned CPUs 4-7 and memory nodes 1; its NUMA nodes' 1 planned hugepage pools hold their planned pages"},
		{"cpus", plan, cpus, corev1.ConditionTrue, ReasonCpusetDrifted, "slice node1.slice: CPUs: planned 4-7, now 4-5"},
		{"pools", plan, pools, corev1.ConditionTrue, ReasonHugepagesDrifted, "hugepages: node1 hugepages-2Mi: 16 pages planned, 3 now"},
		{"both", plan, both, corev1.ConditionTrue, ReasonDrifted,
			"slice node1.slice: CPUs: planned 4-7, now 4-5; hugepages: node1 hugepages-2Mi: 16 pages planned, 3 now"},
		{"nothing read", plan, unread, corev1.ConditionTrue, ReasonDrifted,
			"slice node1.slice: CPUs: planned 4-7, now unreadable, memory nodes: planned 1, now unreadable; hugepages: hugepage pools unreadable: open /sys/devices/system/node: permission denied"},
		{"node missing", plan, Observed{Cpuset: asPlanned.Cpuset, Nodes: map[int][]numa.Hugepages{}}, corev1.ConditionTrue, ReasonHugepagesDrifted,
			"hugepages: node1: not found in sysfs"},
		{"bounded", many, Observed{Cpuset: asPlanned.Cpuset, Nodes: map[int][]numa.Hugepages{}}, corev1.ConditionTrue, ReasonHugepagesDrifted,
			"hugepages: node0: not found in sysfs, node1: not found in sysfs, node2: not found in sysfs, node3: not found in sysfs, node4: not found in sysfs, node5: not found in sysfs, node6: not found in sysfs, node7: not found in sysfs and 2 more"},
	} {
		got := Verdict(c.plan, c.obs)
		if got.Type != Type || got.Status != c.status || got.Reason != c.reason || got.Message != c.msg {
			t.Errorf("%s: %s %s %q\nwant %s %s %q", c.name, got.Status, got.Reason, got.Message, c.status, c.reason, c.msg)
		}
	}
}

// syncBuffer is a log written by the loop's goroutine, read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRun: against a fake API server, a fake cgroup tree and a fake
// sysfs, the loop's first check writes False; a changed cpuset, then a
// shrunk pool, turn it True with their reasons; restored, False again. A
// kubeconfig not there yet (TLS bootstrap) is one warning, however many
// checks fail, and the next check after it appears writes.
func TestRun(t *testing.T) {
	sysfs := numatest.Shape{Name: "two", Sockets: 1, NodesPerSocket: 2, CoresPerSocket: 8, ThreadsPerCore: 1,
		NodeMemory: 4 << 30, PageSizes: []uint64{mi2}}.WriteTemp(t)
	pool := filepath.Join(sysfs, "devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages")
	writeFile(t, pool, "16\n")
	root := t.TempDir()
	cg := filepath.Join(root, "sys/fs/cgroup/node1.slice")
	writeFile(t, filepath.Join(cg, "cpuset.cpus.effective"), "4-7\n")
	writeFile(t, filepath.Join(cg, "cpuset.mems.effective"), "1\n")

	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node1", corev1.ConditionTrue, "KubeletReady", "ready"))
	dir := t.TempDir()
	cert, key := s.CA.Client(t, "system:node:host-node1", "system:nodes")
	writeFile(t, filepath.Join(dir, "kubelet.pem"), string(append(cert, key...)))
	kubeconfig := filepath.Join(dir, "kubelet.conf") // written once "bootstrapped"

	tick := make(chan time.Time)
	type write struct {
		c   corev1.NodeCondition
		err error
	}
	writes := make(chan write)
	var observed []bool
	var log syncBuffer
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	o := Options{Plan: plan, Node: "host-node1", Kubeconfig: kubeconfig, Root: root, Sysfs: sysfs, CgroupV2: true,
		Tick: tick, Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(&log, nil)),
		Observe: func(d bool) { observed = append(observed, d) },
		Written: func(c corev1.NodeCondition, err error) { writes <- write{c, err} }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Run(ctx, o); close(done) }()
	defer func() { cancel(); <-done }()
	// next lets the loop check (the first check needs no tick) and
	// returns what it wrote.
	first := true
	next := func() write {
		t.Helper()
		if !first {
			now = now.Add(time.Minute)
			tick <- now
		}
		first = false
		select {
		case w := <-writes:
			return w
		case <-time.After(20 * time.Second):
			t.Fatal("no check")
			return write{}
		}
	}

	for range 3 {
		if w := next(); w.err == nil || !strings.Contains(w.err.Error(), "kubelet.conf") {
			t.Fatalf("without a kubeconfig: %v, want an error naming it", w.err)
		}
	}
	if n := strings.Count(log.String(), "could not write the Node condition"); n != 1 {
		t.Errorf("%d warnings over 3 failed checks in 3 minutes, want 1:\n%s", n, log.String())
	}
	writeFile(t, kubeconfig, string(s.Kubeconfig(t, map[string]string{"client-certificate": "kubelet.pem", "client-key": "kubelet.pem"})))

	condition := func() corev1.NodeCondition {
		t.Helper()
		for _, c := range s.GetNode("host-node1").Status.Conditions {
			if c.Type == Type {
				return c
			}
		}
		t.Fatalf("no %s condition on the Node", Type)
		return corev1.NodeCondition{}
	}
	expect := func(status corev1.ConditionStatus, reason string) {
		t.Helper()
		if w := next(); w.err != nil {
			t.Fatalf("write: %v", w.err)
		}
		if c := condition(); c.Status != status || c.Reason != reason || !c.LastHeartbeatTime.Time.Equal(now) {
			t.Errorf("condition %s %s %q heartbeat %v, want %s %s at %v", c.Status, c.Reason, c.Message, c.LastHeartbeatTime, status, reason, now)
		}
	}
	expect(corev1.ConditionFalse, ReasonAsPlanned)
	since := condition().LastTransitionTime
	if !strings.Contains(log.String(), "writing the Node condition again") {
		t.Errorf("the recovery is not logged:\n%s", log.String())
	}
	expect(corev1.ConditionFalse, ReasonAsPlanned)
	if c := condition(); !c.LastTransitionTime.Equal(&since) {
		t.Errorf("transition time moved without a change: %v, was %v", c.LastTransitionTime, since)
	}
	writeFile(t, filepath.Join(cg, "cpuset.cpus.effective"), "0-7\n")
	expect(corev1.ConditionTrue, ReasonCpusetDrifted)
	if c := condition(); !strings.Contains(c.Message, "CPUs: planned 4-7, now 0-7") {
		t.Errorf("message %q", c.Message)
	}
	writeFile(t, pool, "3\n")
	expect(corev1.ConditionTrue, ReasonDrifted)
	writeFile(t, filepath.Join(cg, "cpuset.cpus.effective"), "4-7\n")
	expect(corev1.ConditionTrue, ReasonHugepagesDrifted)
	writeFile(t, pool, "16\n")
	expect(corev1.ConditionFalse, ReasonAsPlanned)
	if c := condition(); !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("transition time %v after the change back, want %v", c.LastTransitionTime, now)
	}
	if ready := s.GetNode("host-node1").Status.Conditions; len(ready) != 3 {
		t.Errorf("kubelet's conditions were touched: %+v", ready)
	}
	cancel()
	<-done
	want := []bool{false, false, false, false, false, true, true, true, false}
	if len(observed) != len(want) {
		t.Fatalf("observed %v, want %v", observed, want)
	}
	for i := range want {
		if observed[i] != want[i] {
			t.Errorf("observed %v, want %v", observed, want)
			break
		}
	}
}
