package daemon

import (
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/numa-partition/numa-partition/kubeapi"
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
	nriEvents   *prometheus.HistogramVec
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
			Help: "Errors by operation: admit, release, checkpoint, sync (a journal fdatasync after the answer; the state was then written whole as the checkpoint), peer (credentials unreadable).",
		}, []string{"op"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "admission_duration_seconds", ConstLabels: labels,
			Help:    "Time from receiving an admission (an API request, or the NRI plugin's for a container it is creating) to answering it: the decision and its journal append (the fdatasync follows the answer), or a compaction into the checkpoint, fsyncs included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16), // 100µs .. 3.3s
		}),
		checkpoint: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "checkpoint_write_duration_seconds", ConstLabels: labels,
			Help:    "Time of one durable write: a journal append and its fdatasync (which follows the answer), or now and then a compaction into the checkpoint (write, fsync, rename, fsync dir).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		nriEvents: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "nri_event_duration_seconds", ConstLabels: labels,
			Help: "Time the NRI plugin took to answer containerd, by event (create_container, stop_container, remove_container, " +
				"stop_pod_sandbox, remove_pod_sandbox, synchronize): containerd waits for each answer, one event at a time, so " +
				"create_container's is what the plugin adds to a container's creation on top of NRI's own round trip.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"event"}),
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
	for _, op := range []string{"admit", "release", "checkpoint", "sync", "peer"} {
		m.errors.WithLabelValues(op)
	}
	m.registry.MustRegister(m.admissions, m.releases, m.errors, m.latency, m.checkpoint, m.nriEvents, m.peersDenied,
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

// ObserveNRIEvent counts the time the NRI plugin took to answer one
// event (nriplugin.Options.ObserveEvent).
func (s *Server) ObserveNRIEvent(event string, took time.Duration) {
	s.metrics.nriEvents.WithLabelValues(event).Observe(took.Seconds())
}

// ObservePodCache exports the status of the NRI plugin's pod cache
// (kubeapi.PodCache.Status): an API server that is down delays the pods
// placed as one unit, and this says so.
func (s *Server) ObservePodCache(status func() kubeapi.CacheStatus) error {
	return s.metrics.registry.Register(&podCacheCollector{status: status, labels: prometheus.Labels{"partition": s.partition}})
}

type podCacheCollector struct {
	status func() kubeapi.CacheStatus
	labels prometheus.Labels
}

func (c *podCacheCollector) descs() []*prometheus.Desc {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(metricsNamespace+"_pod_cache_"+name, help, nil, c.labels)
	}
	return []*prometheus.Desc{
		d("synced", "1 when the pod cache's last list or watch of the API server worked, else 0: pods placed as one unit (pod scope, VMs) wait for the API server."),
		d("failing_seconds", "How long the API server has been failing for the pod cache; 0 when it answers."),
		d("pods", "Pods bound to the partition's Node in the pod cache."),
		d("lists_total", "Lists of the Node's pods: the first, and again after a watch fell too far behind (410 Gone)."),
		d("errors_total", "Failed lists and watches of the Node's pods."),
		d("waits_total", "Pod reads that waited for a pod not yet in the cache."),
		d("timeouts_total", "Pod reads that gave up waiting (the container was refused)."),
	}
}

func (c *podCacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs() {
		ch <- d
	}
}

func (c *podCacheCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.status()
	synced, failing := 0.0, 0.0
	if st.Synced {
		synced = 1
	}
	if !st.ErrorSince.IsZero() {
		failing = time.Since(st.ErrorSince).Seconds()
	}
	d := c.descs()
	ch <- prometheus.MustNewConstMetric(d[0], prometheus.GaugeValue, synced)
	ch <- prometheus.MustNewConstMetric(d[1], prometheus.GaugeValue, failing)
	ch <- prometheus.MustNewConstMetric(d[2], prometheus.GaugeValue, float64(st.Pods))
	ch <- prometheus.MustNewConstMetric(d[3], prometheus.CounterValue, float64(st.Lists))
	ch <- prometheus.MustNewConstMetric(d[4], prometheus.CounterValue, float64(st.Errors))
	ch <- prometheus.MustNewConstMetric(d[5], prometheus.CounterValue, float64(st.Waits))
	ch <- prometheus.MustNewConstMetric(d[6], prometheus.CounterValue, float64(st.Timeouts))
}
