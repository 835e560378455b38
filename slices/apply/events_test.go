package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// eventLines are s's Events as "node type reason: message", a drain's
// duration as D.
func eventLines(s *kubeapitest.Server) []string {
	took := regexp.MustCompile(` in [0-9.]+m?s$`)
	var out []string
	for _, e := range s.Events() {
		out = append(out, e.InvolvedObject.Name+" "+e.Type+" "+e.Reason+": "+took.ReplaceAllString(e.Message, " in D"))
	}
	return out
}

func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// eventOptions are apply's Options with an admin identity, --drain, and
// the Events recorded from host "host", logged into the returned buffer.
func eventOptions(t *testing.T, admin string) (Options, *bytes.Buffer) {
	var logged bytes.Buffer
	o := Options{Root: "/", Log: slog.New(slog.NewTextHandler(&logged, nil)),
		Nodes: NodeOptions{Kubeconfig: admin, Drain: true, Timeout: 10 * time.Second, Poll: 10 * time.Millisecond}}
	o.defaults()
	o.events = newEvents(o, "host")
	return o, &logged
}

// drainAndApply is what apply --drain does with applyCluster's Nodes on
// success, with s answering Events with refuse (0: taking them): drain
// node0's and old's, restart node0's kubelet (its Node Ready since),
// remove old, apply changes to node0 and node1. It returns the report,
// its drains' durations zeroed, and the warnings, as JSON.
func drainAndApply(t *testing.T, s *kubeapitest.Server, targets []nodeTarget, o Options, refuse int) string {
	t.Helper()
	s.RefuseEvents = refuse
	s.SetPDB(budget(5))
	ctx := context.Background()
	n, warnings, err := prepareNodes(ctx, o, "apply", targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	since := time.Now()
	heartbeat(s, "host-node0", since)
	n.removed(ctx, 4)
	n.applied(ctx, []RecordPartition{targets[0].RecordPartition, {Name: "node1", NodeName: "host-node1"}},
		map[string][]string{"node0": {"kubelet config", "restart kubelet-node0.service"}, "node1": {"slice node1.slice (CPUs 4-7, memory nodes 1)"}}, 4)
	deleted := runDeletions(t, n)
	warnings = append(warnings, n.readmit(ctx, since)...)
	rep := n.report()
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
	admin := kubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	o, logged := eventOptions(t, admin)
	drainAndApply(t, s, targets, o, 0)
	sameLines(t, "events", eventLines(s), []string{
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
	kubeconfigFor(t, s2, rec.Partitions[1].Kubeconfig, "system:node:host-node1", "system:nodes")
	changes := map[string][]string{"node0": {"kubelet config"}, "node1": {"kubelet config"}}
	for _, admin := range []string{"", kubeconfigFor(t, s2, filepath.Join(t.TempDir(), "admin.conf"), "kubernetes-admin", "system:masters")} {
		o, _ := eventOptions(t, admin)
		n, _, err := prepareNodes(context.Background(), o, "apply", nil, nil)
		must(t, err)
		n.applied(context.Background(), rec.Partitions, changes, 5)
		n.close()
	}
	sameLines(t, "events of an apply that disrupts no Node", eventLines(s2), []string{
		"host-node1 Normal PartitionApplied: numa-partition apply: applied generation 5: kubelet config",
		"host-node0 Normal PartitionApplied: numa-partition apply: applied generation 5: kubelet config",
		"host-node1 Normal PartitionApplied: numa-partition apply: applied generation 5: kubelet config",
	})

	// A dry run records nothing.
	o.DryRun = true
	if newEvents(o, "host") != nil {
		t.Error("a dry run's recorder")
	}
}

// TestApplyNodesEventsDrainFails: a drain that times out is a Warning on
// its Node with the drain's error, and each Node this apply cordoned
// gets an Uncordoned Event once it gives up.
func TestApplyNodesEventsDrainFails(t *testing.T) {
	s, targets, dir := applyCluster(t)
	admin := kubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
	o, _ := eventOptions(t, admin)
	drainFails(t, s, targets, o, 0)
	sameLines(t, "events", eventLines(s), []string{
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
func drainFails(t *testing.T, s *kubeapitest.Server, targets []nodeTarget, o Options, refuse int) string {
	t.Helper()
	s.RefuseEvents = refuse
	o.Nodes.Timeout = 100 * time.Millisecond
	o.Nodes.Progress = func(p drain.Progress) {
		if p.Phase == drain.PhaseCordoned && p.Node == "host-old" {
			s.SetPDB(budget(0))
		}
	}
	_, _, err := prepareNodes(context.Background(), o, "apply", targets, nil)
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
		admin := kubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
		o, log := eventOptions(t, admin)
		ok = drainAndApply(t, s, targets, o, refuse)
		s, targets, dir = applyCluster(t)
		admin = kubeconfigFor(t, s, filepath.Join(dir, "admin.conf"), "kubernetes-admin", "system:masters")
		o.Nodes.Kubeconfig = admin
		o.events = newEvents(o, "host")
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

// TestPartitionChanges: a partition's slice (its CPUs when set live),
// its kubelet's configuration, its other units' files, its kubelet's
// state, the units started, restarted (a kubelet stopped and started
// again too), stopped, each once; a host-wide
// unit's steps are no partition's; a partition that goes has its record's
// units.
func TestPartitionChanges(t *testing.T) {
	units := []bundle.Unit{
		{Name: "node0.slice", Phase: bundle.PhaseSlice, Partition: "node0", Files: []string{"etc/systemd/system/node0.slice"}},
		{Name: "containerd-node0.service", Phase: bundle.PhaseRuntime, Partition: "node0", Files: []string{"etc/systemd/system/containerd-node0.service", "etc/containerd-node0/config.toml"}},
		{Name: "kubelet-node0.service", Phase: bundle.PhaseKubelet, Partition: "node0", KubeletState: &bundle.KubeletState{Dir: "var/lib/kubelet-node0"},
			Files: []string{"etc/systemd/system/kubelet-node0.service", "var/lib/kubelet-node0/config.yaml"}},
		{Name: "numa-allocator@node0.service", Phase: bundle.PhaseAllocator, Partition: "node0", Files: []string{"etc/systemd/system/numa-allocator@.service"}},
		{Name: "numa-allocator@node1.service", Phase: bundle.PhaseAllocator, Partition: "node1", Files: []string{"etc/systemd/system/numa-allocator@.service"}},
		{Name: "system.slice", Phase: bundle.PhaseSlice, Files: []string{"etc/systemd/system/system.slice.d/50-numa-partition.conf"}},
		// The record's: node2 goes.
		{Name: "kubelet-node2.service", Phase: bundle.PhaseKubelet, Partition: "node2", KubeletState: &bundle.KubeletState{Dir: "var/lib/kubelet-node2"}},
	}
	cpus := bitmask.MustParseCPUList("2-7")
	steps := []Step{
		{Action: StopUnit{Unit: "kubelet-node2.service"}},
		{Action: StopUnit{Unit: "kubelet-node0.service"}},
		{Action: WriteFile{Path: "var/lib/kubelet-node0/config.yaml"}},
		{Action: WriteFile{Path: "etc/systemd/system/kubelet-node0.service"}},
		{Action: WriteFile{Path: "etc/systemd/system/node0.slice"}},
		{Action: WriteFile{Path: "etc/containerd-node0/config.toml"}},
		{Action: WriteFile{Path: "etc/systemd/system/numa-allocator@.service"}},
		{Action: WriteFile{Path: "etc/systemd/system/system.slice.d/50-numa-partition.conf"}},
		{Action: DaemonReload{}},
		{Action: SetSliceCPUs{Unit: "node0.slice", CPUs: cpus, Mems: bitmask.NewNodeSet(0)}},
		{Action: SetSliceCPUs{Unit: "system.slice", CPUs: cpus}},
		{Action: PrepareKubeletState{Unit: "kubelet-node0.service"}},
		{Action: RestartUnit{Unit: "containerd-node0.service"}},
		{Action: StartUnit{Unit: "kubelet-node0.service"}},
		{Action: StartUnit{Unit: "numa-allocator@node0.service"}},
		{Action: RestartUnit{Unit: "numa-allocator@node1.service"}},
		{Action: WriteRecord{}},
	}
	got := partitionChanges(units, steps)
	want := map[string][]string{
		"node0": {"slice node0.slice (CPUs 2-7, memory nodes 0)", "kubelet config", "files of containerd-node0.service, numa-allocator@node0.service",
			"manager state of kubelet-node0.service moved aside", "start numa-allocator@node0.service",
			"restart containerd-node0.service, kubelet-node0.service"},
		"node1": {"files of numa-allocator@node1.service", "restart numa-allocator@node1.service"},
		"node2": {"stop kubelet-node2.service"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes:\n%q\nwant:\n%q", got, want)
	}
}

// TestEventReasonsDocumented: docs/apply.md's table has every reason an
// Event on a Node may carry, with its type, and no other.
func TestEventReasonsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/apply.md")
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
