package promstat

import (
	"fmt"
	"math"
	"strings"
)

// Mutating reports whether an apiserver_request_* verb label changes state.
// The label holds the request's verb as the API server's metrics name it
// (POST, PUT, PATCH, APPLY for server-side apply, DELETE, DELETECOLLECTION).
func Mutating(verb string) bool {
	switch verb {
	case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION":
		return true
	}
	return false
}

// longRunning reports whether a verb is a long-running request (a watch, a
// connect), which SIG Scalability's latency SLIs and request rates leave out.
func longRunning(verb string) bool {
	return verb == "WATCH" || verb == "WATCHLIST" || verb == "CONNECT"
}

// MinSamples is how many calls a (verb, resource) pair needs in the window
// for its p99 to count towards the worst one: with fewer, a p99 is one slow
// call (a resource's first write, a CRD's discovery) rather than a tail.
const MinSamples = 20

// APIServerFigures computes, from kube-apiserver scrapes before and after a
// window of seconds (and etcd's scrape, optional), the figures run.sh
// records. Values are float64 (NaN: not measurable, e.g. no samples) or
// string.
func APIServerFigures(before, after Scrape, seconds float64, etcd Scrape) (map[string]any, error) {
	out := map[string]any{"seconds": seconds}
	reqs := []struct {
		key   string
		match Match
	}{
		{"requests", func(l Labels) bool { return !longRunning(l["verb"]) }},
		{"reads", func(l Labels) bool { return l["verb"] == "GET" || l["verb"] == "LIST" }},
		{"mutating", func(l Labels) bool { return Mutating(l["verb"]) }},
		{"lease_writes", func(l Labels) bool { return l["resource"] == "leases" && Mutating(l["verb"]) }},
		{"node_writes", func(l Labels) bool { return l["resource"] == "nodes" && Mutating(l["verb"]) }},
		{"pod_writes", func(l Labels) bool { return l["resource"] == "pods" && Mutating(l["verb"]) }},
		{"csr_requests", func(l Labels) bool { return l["resource"] == "certificatesigningrequests" && !longRunning(l["verb"]) }},
		{"creates", func(l Labels) bool { return l["verb"] == "POST" }},
		{"deletes", func(l Labels) bool { return l["verb"] == "DELETE" || l["verb"] == "DELETECOLLECTION" }},
	}
	for _, r := range reqs {
		d, err := Delta(before, after, "apiserver_request_total", r.match)
		if err != nil {
			return nil, err
		}
		out[r.key+"_total"] = d
		out[r.key+"_per_s"] = d / seconds
	}

	// Open watches: apiserver_longrunning_requests is the gauge every
	// version keeps; apiserver_registered_watchers (per kind) is reported
	// too where this version still has it.
	if w, ok := after.Sum("apiserver_longrunning_requests", func(l Labels) bool { return l["verb"] == "WATCH" }); ok {
		out["watches"] = w
	} else {
		out["watches"] = math.NaN()
	}
	if w, ok := after.Sum("apiserver_registered_watchers", nil); ok {
		out["registered_watchers"] = w
	} else {
		out["registered_watchers"] = math.NaN()
	}

	// Stored objects: apiserver_resource_objects (group and resource
	// labels) since 1.34, apiserver_storage_objects ("leases.coordination.k8s.io")
	// before. The API server refreshes them about once a minute.
	objects := func(res, group string) float64 {
		for _, name := range []string{"apiserver_resource_objects", "apiserver_storage_objects"} {
			v, ok := after.Sum(name, func(l Labels) bool {
				return res == "" || (l["resource"] == res && l["group"] == group) || (group != "" && l["resource"] == res+"."+group) || (group == "" && l["resource"] == res)
			})
			if ok {
				return v
			}
		}
		return math.NaN()
	}
	out["objects"] = objects("", "")
	out["objects_nodes"] = objects("nodes", "")
	out["objects_pods"] = objects("pods", "")
	out["objects_leases"] = objects("leases", "coordination.k8s.io")

	// SIG Scalability's API call latency SLI for mutating calls: per
	// (resource, subresource, verb) of single objects (scope=resource), the
	// 99th percentile; the SLO is ≤ 1 s for each pair.
	single := func(l Labels) bool { return l["scope"] == "resource" && Mutating(l["verb"]) }
	pooled, err := HistogramDelta(before, after, "apiserver_request_duration_seconds", single)
	if err != nil {
		return nil, err
	}
	out["p99_mutating_s"] = Quantile(0.99, pooled[""])
	pairs, err := HistogramDelta(before, after, "apiserver_request_duration_seconds", single, "verb", "resource", "subresource")
	if err != nil {
		return nil, err
	}
	worst, worstCall, worstN := math.NaN(), "-", 0.0
	for call, bs := range pairs {
		if Total(bs) < MinSamples {
			continue
		}
		if q := Quantile(0.99, bs); math.IsNaN(worst) || q > worst {
			worst, worstCall, worstN = q, call, Total(bs)
		}
	}
	out["worst_p99_s"] = worst
	out["worst_p99_call"] = fmt.Sprintf("%s(n=%.0f)", trimCall(worstCall), worstN)

	if etcd != nil {
		for k, name := range map[string]string{
			"etcd_db_bytes":        "etcd_mvcc_db_total_size_in_bytes",
			"etcd_db_in_use_bytes": "etcd_mvcc_db_total_size_in_use_in_bytes",
			"etcd_keys":            "etcd_debugging_mvcc_keys_total",
		} {
			v, ok := etcd.Sum(name, nil)
			if !ok {
				v = math.NaN()
			}
			out[k] = v
		}
	}
	return out, nil
}

// trimCall turns "PUT leases " (no subresource) into "PUT_leases" and
// "PATCH nodes status" into "PATCH_nodes/status": one TSV-safe word.
func trimCall(call string) string {
	f := strings.Fields(call)
	switch len(f) {
	case 2:
		return f[0] + "_" + f[1]
	case 3:
		return f[0] + "_" + f[1] + "/" + f[2]
	}
	return strings.Join(f, "_")
}
