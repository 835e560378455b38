package daemon

import (
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/numa-partition/numa-partition/partition/allocator"
)

const metricsNamespace = "numa_partition_allocator"

// Admission results (label "result" of admissions_total).
const (
	resultAdmitted = "admitted" // admitted and checkpointed
	resultRejected = "rejected" // TopologyAffinityError & co: does not fit
	resultRepeated = "repeated" // same UID and manifest again: stored decision returned
	resultInvalid  = "invalid"  // malformed or oversized request, UID conflict
	resultError    = "error"    // the daemon failed (checkpoint write)
)

// metrics is the daemon's own registry: the same families are served on the
// socket and on the optional TCP address.
type metrics struct {
	registry    *prometheus.Registry
	admissions  *prometheus.CounterVec
	releases    *prometheus.CounterVec
	errors      *prometheus.CounterVec
	latency     prometheus.Histogram
	checkpoint  prometheus.Histogram
	peersDenied prometheus.Counter
	snapshot    atomic.Pointer[snapshot]
}

type snapshot struct {
	generation  uint64
	allocations int
	machine     map[int]allocator.NodeState
}

func newMetrics(partition string) *metrics {
	labels := prometheus.Labels{"partition": partition}
	m := &metrics{
		registry: prometheus.NewRegistry(),
		admissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "admissions_total", ConstLabels: labels,
			Help: "Admission requests by result: admitted, rejected (does not fit), repeated (idempotent retry), invalid (bad request), error (daemon failure).",
		}, []string{"result"}),
		releases: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "releases_total", ConstLabels: labels,
			Help: "Release requests by result: released, unknown (no such pod UID), error.",
		}, []string{"result"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "errors_total", ConstLabels: labels,
			Help: "Errors by operation: admit, release, checkpoint, peer (credentials unreadable).",
		}, []string{"op"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "admission_duration_seconds", ConstLabels: labels,
			Help:    "Time from receiving an admission request to answering it, checkpoint fsync included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16), // 100µs .. 3.3s
		}),
		checkpoint: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "checkpoint_write_duration_seconds", ConstLabels: labels,
			Help:    "Time to write the checkpoint durably (write, fsync, rename, fsync dir).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		peersDenied: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "peers_denied_total", ConstLabels: labels,
			Help: "Requests refused because the connecting process is not allowed (SO_PEERCRED).",
		}),
	}
	for _, r := range []string{resultAdmitted, resultRejected, resultRepeated, resultInvalid, resultError} {
		m.admissions.WithLabelValues(r) // export zeroes, so rate() works from the start
	}
	for _, r := range []string{"released", "unknown", "error"} {
		m.releases.WithLabelValues(r)
	}
	for _, op := range []string{"admit", "release", "checkpoint", "peer"} {
		m.errors.WithLabelValues(op)
	}
	m.registry.MustRegister(m.admissions, m.releases, m.errors, m.latency, m.checkpoint, m.peersDenied,
		&stateCollector{m: m, labels: labels},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func (m *metrics) setState(generation uint64, st allocator.State) {
	m.snapshot.Store(&snapshot{generation: generation, allocations: len(st.Allocations), machine: st.Machine})
}

// stateCollector exports the Memory Manager tables of the last committed
// state: consistent per scrape, and the scrape never takes the daemon's lock.
type stateCollector struct {
	m      *metrics
	labels prometheus.Labels
}

func (c *stateCollector) descs() (free, reserved, allocatable, allocations, generation *prometheus.Desc) {
	nr := []string{"node", "resource"}
	free = prometheus.NewDesc(metricsNamespace+"_free_bytes", "Free bytes per NUMA node and resource (memory, hugepages-<size>).", nr, c.labels)
	reserved = prometheus.NewDesc(metricsNamespace+"_reserved_bytes", "Bytes reserved by admitted pods per NUMA node and resource.", nr, c.labels)
	allocatable = prometheus.NewDesc(metricsNamespace+"_allocatable_bytes", "Allocatable bytes (total minus system reserved) per NUMA node and resource.", nr, c.labels)
	allocations = prometheus.NewDesc(metricsNamespace+"_allocations", "Admitted pods holding an allocation.", nil, c.labels)
	generation = prometheus.NewDesc(metricsNamespace+"_state_generation", "Number of state-changing operations since the state was created.", nil, c.labels)
	return
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	a, b, d, e, f := c.descs()
	ch <- a
	ch <- b
	ch <- d
	ch <- e
	ch <- f
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.snapshot.Load()
	if s == nil {
		return
	}
	free, reserved, allocatable, allocations, generation := c.descs()
	ch <- prometheus.MustNewConstMetric(allocations, prometheus.GaugeValue, float64(s.allocations))
	ch <- prometheus.MustNewConstMetric(generation, prometheus.CounterValue, float64(s.generation))
	nodes := make([]int, 0, len(s.machine))
	for id := range s.machine {
		nodes = append(nodes, id)
	}
	sort.Ints(nodes)
	for _, id := range nodes {
		node := strconv.Itoa(id)
		for res, t := range s.machine[id].MemoryMap {
			ch <- prometheus.MustNewConstMetric(free, prometheus.GaugeValue, float64(t.Free), node, string(res))
			ch <- prometheus.MustNewConstMetric(reserved, prometheus.GaugeValue, float64(t.Reserved), node, string(res))
			ch <- prometheus.MustNewConstMetric(allocatable, prometheus.GaugeValue, float64(t.Allocatable), node, string(res))
		}
	}
}
