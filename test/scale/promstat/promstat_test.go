package promstat

import (
	"math"
	"strings"
	"testing"
)

func mustParse(t *testing.T, text string) Scrape {
	t.Helper()
	s, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestQuantileInterpolatesLikePrometheus(t *testing.T) {
	inf := math.Inf(1)
	// 100 observations: 50 ≤ 0.1, 40 in (0.1, 0.2], 9 in (0.2, 0.4], 1 above.
	bs := []Bucket{{0.1, 50}, {0.2, 90}, {0.4, 99}, {inf, 100}}
	for _, c := range []struct{ q, want float64 }{
		{0.25, 0.05}, // rank 25 of 50 in [0, 0.1]
		{0.5, 0.1},   // exactly the first bucket's count
		{0.7, 0.15},  // rank 70: 20 of 40 into (0.1, 0.2]
		{0.99, 0.4},  // rank 99: the top of (0.2, 0.4]
		{0.995, 0.4}, // in +Inf: the highest finite bound
		{0.945, 0.3}, // rank 94.5: 4.5 of 9 into (0.2, 0.4]
	} {
		if got := Quantile(c.q, bs); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Quantile(%g) = %g, want %g", c.q, got, c.want)
		}
	}
	if got := Quantile(0.99, []Bucket{{0.1, 0}, {inf, 0}}); !math.IsNaN(got) {
		t.Errorf("empty histogram: got %g, want NaN", got)
	}
	if got := Quantile(0.99, []Bucket{{0.1, 3}, {0.2, 3}}); !math.IsNaN(got) {
		t.Errorf("no +Inf bucket: got %g, want NaN", got)
	}
}

const before = `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="leases",scope="resource",subresource="",verb="PUT"} 100
apiserver_request_total{code="200",resource="nodes",scope="resource",subresource="status",verb="PATCH"} 10
apiserver_request_total{code="200",resource="pods",scope="namespace",subresource="",verb="LIST"} 5
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{resource="leases",scope="resource",subresource="",verb="PUT",le="0.005"} 90
apiserver_request_duration_seconds_bucket{resource="leases",scope="resource",subresource="",verb="PUT",le="0.1"} 100
apiserver_request_duration_seconds_bucket{resource="leases",scope="resource",subresource="",verb="PUT",le="+Inf"} 100
apiserver_request_duration_seconds_sum{resource="leases",scope="resource",subresource="",verb="PUT"} 1
apiserver_request_duration_seconds_count{resource="leases",scope="resource",subresource="",verb="PUT"} 100
`

// after: 600 more lease PUTs (590 ≤ 5 ms, 10 ≤ 0.1 s), 2 node status PATCHes, 1 slow
// first POST of a CSR (new series), 20 LISTs, 3 watches open.
const after = `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="leases",scope="resource",subresource="",verb="PUT"} 700
apiserver_request_total{code="200",resource="nodes",scope="resource",subresource="status",verb="PATCH"} 12
apiserver_request_total{code="200",resource="pods",scope="namespace",subresource="",verb="LIST"} 25
apiserver_request_total{code="201",resource="certificatesigningrequests",scope="cluster",subresource="",verb="POST"} 1
apiserver_request_total{code="200",resource="pods",scope="namespace",subresource="",verb="WATCH"} 3
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{resource="leases",scope="resource",subresource="",verb="PUT",le="0.005"} 680
apiserver_request_duration_seconds_bucket{resource="leases",scope="resource",subresource="",verb="PUT",le="0.1"} 700
apiserver_request_duration_seconds_bucket{resource="leases",scope="resource",subresource="",verb="PUT",le="+Inf"} 700
apiserver_request_duration_seconds_sum{resource="leases",scope="resource",subresource="",verb="PUT"} 4
apiserver_request_duration_seconds_count{resource="leases",scope="resource",subresource="",verb="PUT"} 700
apiserver_request_duration_seconds_bucket{resource="nodes",scope="resource",subresource="status",verb="PATCH",le="0.005"} 0
apiserver_request_duration_seconds_bucket{resource="nodes",scope="resource",subresource="status",verb="PATCH",le="0.1"} 0
apiserver_request_duration_seconds_bucket{resource="nodes",scope="resource",subresource="status",verb="PATCH",le="+Inf"} 2
apiserver_request_duration_seconds_sum{resource="nodes",scope="resource",subresource="status",verb="PATCH"} 5
apiserver_request_duration_seconds_count{resource="nodes",scope="resource",subresource="status",verb="PATCH"} 2
# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{resource="pods",scope="namespace",verb="WATCH"} 3
apiserver_longrunning_requests{resource="pods",scope="namespace",verb="CONNECT"} 1
# TYPE apiserver_storage_objects gauge
apiserver_storage_objects{resource="nodes"} 4
apiserver_storage_objects{resource="leases.coordination.k8s.io"} 5
`

func TestAPIServerFigures(t *testing.T) {
	b, a := mustParse(t, before), mustParse(t, after)
	etcd := mustParse(t, "# TYPE etcd_mvcc_db_total_size_in_bytes gauge\netcd_mvcc_db_total_size_in_bytes 4096\n")
	got, err := APIServerFigures(b, a, 60, etcd)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"lease_writes_total": 600,
		"lease_writes_per_s": 10,
		"node_writes_total":  2,
		"mutating_total":     603, // leases, node status, the CSR
		"requests_total":     623, // + 20 LISTs, not the watches
		"reads_total":        20,
		"csr_requests_total": 1,
		"creates_total":      1,
		"watches":            3, // the CONNECT is not a watch
		"objects":            9,
		"objects_nodes":      4,
		"objects_leases":     5,
		"objects_pods":       0, // the family is there, no series for pods
		"etcd_db_bytes":      4096,
		// Pooled: 590 of 602 ≤ 5 ms, 10 ≤ 0.1 s, 2 above: rank 595.98
		// falls in (0.005, 0.1]: 0.005 + 0.095*(5.98/10).
		"p99_mutating_s": 0.005 + 0.095*5.98/10,
		// Only the lease PUTs have ≥ MinSamples calls: the 2 slow node
		// PATCHes do not make the worst p99.
		"worst_p99_s": 0.005 + 0.095*(0.99*600-590)/10,
	}
	for k, w := range want {
		v, ok := got[k].(float64)
		if !ok || math.Abs(v-w) > 1e-9 {
			t.Errorf("%s = %v, want %g", k, got[k], w)
		}
	}
	if c := got["worst_p99_call"]; c != "PUT_leases(n=600)" {
		t.Errorf("worst_p99_call = %v, want PUT_leases(n=600)", c)
	}
	for _, k := range []string{"registered_watchers", "etcd_keys"} {
		if v, ok := got[k].(float64); !ok || !math.IsNaN(v) {
			t.Errorf("%s = %v, want NaN (absent from the scrape)", k, got[k])
		}
	}
}

func TestDeltaRefusesACounterThatWentDown(t *testing.T) {
	b, a := mustParse(t, after), mustParse(t, before)
	if _, err := Delta(b, a, "apiserver_request_total", nil); err == nil || !strings.Contains(err.Error(), "went down") {
		t.Fatalf("err = %v, want a counter that went down", err)
	}
	if _, err := Delta(b, mustParse(t, ""), "apiserver_request_total", nil); err == nil {
		t.Fatal("a metric absent from the second scrape must be an error")
	}
}
