package daemon

import (
	"testing"
	"time"
)

// metricValue is the value of the one series of family name whose labels
// include want (label=value pairs), gathered as a scrape would.
func metricValue(t *testing.T, s *Server, name string, want ...string) float64 {
	t.Helper()
	families, err := s.metrics.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(want); i += 2 {
				if labels[want[i]] != want[i+1] {
					continue series
				}
			}
			switch {
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			}
		}
		t.Fatalf("%s has no series with %v", name, want)
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// The health gauges follow the durable writes: pending while one (its
// fdatasync included) runs, the time of the last that succeeded, and
// broken once the state could be put on the disk neither way.
func TestHealthMetricsFollowWrites(t *testing.T) {
	const (
		pending = "numa_partition_allocator_write_pending_seconds"
		last    = "numa_partition_allocator_last_write_success_timestamp_seconds"
		broken  = "numa_partition_allocator_broken"
	)
	dir := t.TempDir()
	s := journalServer(t, dir)
	if got := metricValue(t, s, last); got != 0 {
		t.Fatalf("%s = %v before any write, want 0", last, got)
	}
	before := float64(time.Now().UnixNano()) / 1e9
	if _, _, err := s.admit(manifest(t, "first")); err != nil {
		t.Fatal(err)
	}
	settle(s)
	first := metricValue(t, s, last)
	if first < before || first > float64(time.Now().UnixNano())/1e9 {
		t.Fatalf("%s = %v, want the time of the first write (after %v)", last, first, before)
	}
	if got := metricValue(t, s, pending); got != 0 {
		t.Fatalf("%s = %v with no write running", pending, got)
	}

	// An append answered before its fdatasync, which is held: pending
	// grows and the last success stays the first write's.
	syncing, release := holdSyncs(s)
	if _, _, err := s.admit(manifest(t, "held")); err != nil {
		t.Fatal(err)
	}
	<-syncing
	time.Sleep(20 * time.Millisecond)
	if got := metricValue(t, s, pending); got < 0.02 {
		t.Errorf("%s = %v while an fdatasync is held for 20ms", pending, got)
	}
	if got := metricValue(t, s, last); got != first {
		t.Errorf("%s = %v while the second write is not synced, want the first's %v", last, got, first)
	}
	close(release)
	settle(s)
	if got := metricValue(t, s, pending); got != 0 {
		t.Errorf("%s = %v once the sync is done", pending, got)
	}
	if got := metricValue(t, s, last); got <= first {
		t.Errorf("%s = %v after the second write, want later than %v", last, got, first)
	}
	if got := metricValue(t, s, broken); got != 0 {
		t.Fatalf("%s = %v on a working daemon", broken, got)
	}

	// The fdatasync fails and so does the checkpoint (as in
	// TestFailedSyncAndCheckpointBreakTheDaemon): broken, and the last
	// success is still the second write's.
	second := metricValue(t, s, last)
	failSyncAndCheckpoint(s, dir)
	if _, _, err := s.admit(manifest(t, "a")); err != nil {
		t.Fatal(err)
	}
	settle(s)
	if got := metricValue(t, s, broken); got != 1 {
		t.Errorf("%s = %v after the state could be written neither way, want 1", broken, got)
	}
	if got := metricValue(t, s, last); got != second {
		t.Errorf("%s = %v after failed writes, want the last success's %v", last, got, second)
	}
	if got := metricValue(t, s, "numa_partition_allocator_errors_total", "op", "sync"); got != 1 {
		t.Errorf("errors_total{op=sync} = %v, want 1", got)
	}
}

// A pod that fits no NUMA node is counted by kubelet's reason, and the
// label takes no other value than the known reasons and "other".
func TestRejectionsByReason(t *testing.T) {
	s := journalServer(t, t.TempDir())
	m, err := DecodeManifest([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big","namespace":"ns","uid":"big"},
	  "spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":"1","memory":"20Gi"},"requests":{"cpu":"1","memory":"20Gi"}}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := s.admit(m)
	if err != nil || resp.Decision.Admitted {
		t.Fatalf("want a rejection: %+v %v", resp, err)
	}
	const name = "numa_partition_allocator_rejections_total"
	if got := metricValue(t, s, name, "reason", "TopologyAffinityError"); got != 1 {
		t.Errorf("%s{reason=TopologyAffinityError} = %v, want 1 (reason %q)", name, got, resp.Decision.Reason)
	}
	for _, r := range []string{"UnexpectedAdmissionError", "other"} {
		if got := metricValue(t, s, name, "reason", r); got != 0 {
			t.Errorf("%s{reason=%s} = %v, want 0", name, r, got)
		}
	}
	for msg, want := range map[string]string{
		"TopologyAffinityError: Resources cannot be allocated": "TopologyAffinityError",
		"UnexpectedAdmissionError: Allocate failed":            "UnexpectedAdmissionError",
		"pod big/x: hugepages-2Mi: 0 available on nodes 0-1":   "other",
		"": "other",
	} {
		if got := rejectionReason(msg); got != want {
			t.Errorf("rejectionReason(%q) = %q, want %q", msg, got, want)
		}
	}
}
