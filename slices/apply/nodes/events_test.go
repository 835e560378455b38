package nodes

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// eventOptions are an apply's Command with an admin identity, --drain, and
// the Events recorded from host "host", logged into the returned buffer.
func eventOptions(t *testing.T, admin string) (Command, *bytes.Buffer) {
	var logged bytes.Buffer
	o := Command{Root: "/", Log: slog.New(slog.NewTextHandler(&logged, nil)),
		Nodes: Options{Kubeconfig: admin, Drain: true, Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}}
	o.Events = NewEvents("host", o.Log, time.Now)
	return o, &logged
}

// drainAndApply is what apply --drain does with applyCluster's Nodes on
// success, with s answering Events with refuse (0: taking them): drain
// node0's and old's, restart node0's kubelet (its Node Ready since),
// remove old, apply changes to node0 and node1. It returns the report,
// its drains' durations zeroed, and the warnings, as JSON.
func drainAndApply(t *testing.T, s *kubeapitest.Server, targets []Target, o Command, refuse int) string {
	t.Helper()
	s.RefuseEvents = refuse
	s.SetPDB(applytest.Budget(5))
	ctx := context.Background()
	n, warnings, err := Prepare(ctx, o, "apply", targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	since := time.Now()
	applytest.Heartbeat(s, "host-node0", since)
	n.Removed(ctx, 4)
	n.Applied(ctx, []record.Partition{targets[0].Partition, {Name: "node1", NodeName: "host-node1"}},
		map[string][]string{"node0": {"kubelet config", "restart kubelet-node0.service"}, "node1": {"slice node1.slice (CPUs 4-7, memory nodes 1)"}}, 4)
	deleted := runDeletions(t, n)
	warnings = append(warnings, n.Readmit(ctx, since)...)
	rep := n.Report()
	for i := range rep { // of the test's own: its temporary directory, the time taken
		rep[i].Kubeconfig = filepath.Base(rep[i].Kubeconfig)
		if rep[i].Drain != nil {
			rep[i].Drain.Seconds = 0
		}
	}
	b, err := json.Marshal(map[string]any{"nodes": rep, "warnings": warnings, "deleted": deleted})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestApplyNodesEvents: apply --drain records on each Node it disrupts
// that the drain started (how many pods, within what, why) and ended
// (how many evicted), on the Node of the partition that goes that it is
// removed and deleted next, on the Node whose kubelet restarted that it
// is uncordoned once Ready again, and on each changed partition's Node
// what changed, with the generation; through the admin identity, also
// for a partition it did not disrupt. Without the admin identity a
// partition's Events go through its kubelet's credentials, and nowhere
// when it has none.
func TestApplyNodesEvents(t *testing.T) {
	s, targets, dir := applyCluster(t)
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	o, logged := eventOptions(t, admin)
	drainAndApply(t, s, targets, o, 0)
	applytest.SameLines(t, "events", applytest.EventLines(s), []string{
		"host-node0 Normal DrainStarted: numa-partition apply: cordoned, evicting 1 pods within 10s (kubelet-node0.service restarts on fresh CPU/Memory Manager state)",
		"host-node0 Normal Drained: numa-partition apply: drained: 1 pods evicted in D",
		"host-old Normal DrainStarted: numa-partition apply: cordoned, evicting 1 pods within 10s (partition old goes)",
		"host-old Normal Drained: numa-partition apply: drained: 1 pods evicted in D",
		"host-old Normal PartitionRemoved: numa-partition apply: partition old removed (generation 4), its kubelet stopped for good; the Node is deleted next",
		"host-node0 Normal PartitionApplied: numa-partition apply: applied generation 4: kubelet config, restart kubelet-node0.service",
		"host-node1 Normal PartitionApplied: numa-partition apply: applied generation 4: slice node1.slice (CPUs 4-7, memory nodes 1)",
		"host-node0 Normal Uncordoned: numa-partition apply: uncordoned: Ready again since kubelet-node0.service restarted",
	})
	if e := s.Events()[0]; e.Source.Host != "host" || e.ReportingInstance != "host" || e.InvolvedObject.UID != "host-node0" {
		t.Errorf("event %+v", e)
	}
	if strings.Contains(logged.String(), "level=WARN") {
		t.Errorf("warnings logged:\n%s", logged)
	}

	// An apply that disrupts no Node: each partition's kubelet
	// credentials, for the one that has them; with --kubeconfig, that.
	s2, rec, _ := nodeCluster(t)
	applytest.KubeconfigFor(t, s2, rec.Partitions[1].Kubeconfig, "system:node:host-node1", "system:nodes")
	changes := map[string][]string{"node0": {"kubelet config"}, "node1": {"kubelet config"}}
	for _, admin := range []string{"", applytest.KubeconfigFor(t, s2, filepath.Join(t.TempDir(), "admin.conf"), "kubernetes-admin", "system:masters")} {
		o, _ := eventOptions(t, admin)
		n, _, err := Prepare(context.Background(), o, "apply", nil, nil)
		must(t, err)
		n.Applied(context.Background(), rec.Partitions, changes, 5)
		n.Close()
	}
	applytest.SameLines(t, "events of an apply that disrupts no Node", applytest.EventLines(s2), []string{
		"host-node1 Normal PartitionApplied: numa-partition apply: applied generation 5: kubelet config",
		"host-node0 Normal PartitionApplied: numa-partition apply: applied generation 5: kubelet config",
		"host-node1 Normal PartitionApplied: numa-partition apply: applied generation 5: kubelet config",
	})
}

// TestApplyNodesEventsDrainFails: a drain that times out is a Warning on
// its Node with the drain's error, and each Node this apply cordoned
// gets an Uncordoned Event once it gives up.
func TestApplyNodesEventsDrainFails(t *testing.T) {
	s, targets, dir := applyCluster(t)
	admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	o, _ := eventOptions(t, admin)
	drainFails(t, s, targets, o, 0)
	applytest.SameLines(t, "events", applytest.EventLines(s), []string{
		"host-node0 Normal DrainStarted: numa-partition apply: cordoned, evicting 1 pods within 100ms (kubelet-node0.service restarts on fresh CPU/Memory Manager state)",
		"host-node0 Normal Drained: numa-partition apply: drained: 1 pods evicted in D",
		"host-old Normal DrainStarted: numa-partition apply: cordoned, evicting 1 pods within 100ms (partition old goes)",
		"host-old Warning DrainFailed: numa-partition apply: nothing on the host was changed: draining Node host-old: 1 of 1 pods still not evicted after 100ms (shop/web-old): PodDisruptionBudget shop/web holds back shop/web-old: needs 1 healthy pods, has 1, allows 0 disruptions",
		"host-node0 Normal Uncordoned: numa-partition apply: uncordoned: the apply gave up before it changed the host",
		"host-old Normal Uncordoned: numa-partition apply: uncordoned: the apply gave up before it changed the host",
	})
}

// drainFails is TestApplyNodesDrainFails's apply, with s answering Events
// with refuse: old's drain times out. It returns the error.
func drainFails(t *testing.T, s *kubeapitest.Server, targets []Target, o Command, refuse int) string {
	t.Helper()
	s.RefuseEvents = refuse
	o.Nodes.Timeout = 100 * time.Millisecond
	o.Nodes.Progress = func(p drain.Progress) {
		if p.Phase == drain.PhaseCordoned && p.Node == "host-old" {
			s.SetPDB(applytest.Budget(0))
		}
	}
	_, _, err := Prepare(context.Background(), o, "apply", targets, nil)
	if err == nil {
		t.Fatal("old's drain did not fail")
	}
	return err.Error()
}

// TestApplyNodesEventsRefused: an API server that refuses Events (403,
// 500) leaves what apply does and reports exactly as one that takes
// them, on success and on a failed drain; each refusal is one warning
// in the log, naming the Node, the reason and the API's answer.
func TestApplyNodesEventsRefused(t *testing.T) {
	outcome := func(refuse int) (ok, failed string, events int, logged string) {
		s, targets, dir := applyCluster(t)
		admin := applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
		o, log := eventOptions(t, admin)
		ok = drainAndApply(t, s, targets, o, refuse)
		s, targets, dir = applyCluster(t)
		admin = applytest.KubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
		o.Nodes.Kubeconfig = admin
		o.Events = NewEvents("host", o.Log, time.Now)
		failed = drainFails(t, s, targets, o, refuse)
		return ok, failed, len(s.Events()), log.String()
	}
	ok, failed, events, _ := outcome(0)
	if events == 0 {
		t.Fatal("no Events taken")
	}
	for _, refuse := range []int{http.StatusForbidden, http.StatusInternalServerError} {
		ok2, failed2, events2, logged := outcome(refuse)
		if ok2 != ok || failed2 != failed || events2 != 0 {
			t.Errorf("%d: report\n%s\nwant\n%s\nerror %q, want %q; %d Events", refuse, ok2, ok, failed2, failed, events2)
		}
		// One warning per recorder and client: the admin identity's
		// first refusal; the rest of the command's Events are not sent.
		if strings.Count(logged, "level=WARN") != 2 || !strings.Contains(logged, "could not record an Event on the Node") ||
			!strings.Contains(logged, "node=host-node0 reason=DrainStarted") || !strings.Contains(logged, http.StatusText(refuse)) {
			t.Errorf("%d: log:\n%s", refuse, logged)
		}
	}
}

// TestEventReasonsDocumented: docs/apply.md's table has every reason an
// Event on a Node may carry, with its type, and no other.
func TestEventReasonsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../../docs/apply.md")
	must(t, err)
	doc := string(b)
	reasons := map[string]string{
		EventDrainStarted: "Normal", EventDrained: "Normal", EventDrainFailed: "Warning", EventPartitionApplied: "Normal",
		EventApplyFailed: "Warning", EventUncordoned: "Normal", EventPartitionRemoved: "Normal",
	}
	for reason, typ := range reasons {
		if !strings.Contains(doc, "\n| `"+reason+"` | "+typ+" | ") {
			t.Errorf("docs/apply.md has no row for the %s Event %s", typ, reason)
		}
	}
	start := strings.Index(doc, "| reason | type | when | message (example) |")
	if start < 0 {
		t.Fatal("docs/apply.md has no table of the Events")
	}
	rows := regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| ").FindAllStringSubmatch(doc[start:start+strings.Index(doc[start:], "\n\n")], -1)
	if len(rows) != len(reasons) {
		t.Errorf("the table has %d rows, numa-partition records %d reasons", len(rows), len(reasons))
	}
}
