package daemon

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
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
	rejections  *prometheus.CounterVec
	releases    *prometheus.CounterVec
	errors      *prometheus.CounterVec
	latency     prometheus.Histogram
	checkpoint  prometheus.Histogram
	nriEvents   *prometheus.HistogramVec
	peersDenied prometheus.Counter
	snapshot    atomic.Pointer[snapshot]
	// The health gauges, read at scrape time without the daemon's lock:
	// broken mirrors Server.broken; writeStart is when the durable write
	// in progress began (its fdatasync included), 0 when none runs;
	// lastWrite is when the last one succeeded, 0 before the first.
	broken     atomic.Bool
	writeStart atomic.Int64 // unix nanoseconds
	lastWrite  atomic.Int64 // unix nanoseconds
	drift      atomic.Int64 // memory tables changed since the checkpoint, at start
}

type snapshot struct {
	generation  uint64
	allocations int
	machine     map[int]allocator.NodeState
}

// Rejection reasons (label "reason" of rejections_total): kubelet's, the
// prefix of every Decision.Reason the allocator writes, and "other" for
// anything else, so that the label's values stay a fixed few whatever a
// message holds.
var rejectionReasons = []string{allocator.ReasonTopologyAffinity, allocator.ReasonUnexpected, "other"}

func rejectionReason(msg string) string {
	for _, r := range rejectionReasons[:len(rejectionReasons)-1] {
		if strings.HasPrefix(msg, r) {
			return r
		}
	}
	return "other"
}

// newMetrics makes the registry of partition's daemon; version and commit
// are numa_partition_build_info's, the binary's (set by the Makefile's
// ldflags in package main, which passes them down: Options.Version and
// Options.Commit).
func newMetrics(partition, version, commit string) *metrics {
	labels := prometheus.Labels{"partition": partition}
	m := &metrics{
		registry: prometheus.NewRegistry(),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "rejections_total", ConstLabels: labels,
			Help: "Admissions rejected (result=\"rejected\" of admissions_total) by kubelet's reason: TopologyAffinityError (the pod does not fit the policy on any NUMA nodes), UnexpectedAdmissionError, other.",
		}, []string{"reason"}),
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
	for _, r := range rejectionReasons {
		m.rejections.WithLabelValues(r)
	}
	for _, r := range []string{"released", "unknown", "error"} {
		m.releases.WithLabelValues(r)
	}
	for _, op := range []string{"admit", "release", "checkpoint", "sync", "peer"} {
		m.errors.WithLabelValues(op)
	}
	// numa_partition_build_info, not under the allocator's namespace: the
	// convention (prometheus_build_info, node_exporter_build_info) is one
	// per program, and the daemon is the numa-partition binary.
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "numa_partition_build_info", ConstLabels: labels,
		Help: "Always 1: the version, commit and Go version of the numa-partition binary the allocator daemon runs.",
	}, []string{"version", "commit", "goversion"})
	buildInfo.WithLabelValues(version, commit, runtime.Version()).Set(1)
	m.registry.MustRegister(buildInfo, m.rejections, m.admissions, m.releases, m.errors, m.latency, m.checkpoint, m.nriEvents, m.peersDenied,
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
// state and the daemon's health: consistent per scrape, and the scrape
// never takes the daemon's lock.
type stateCollector struct {
	m      *metrics
	labels prometheus.Labels
}

type stateDescs struct {
	free, reserved, allocatable, allocations, generation *prometheus.Desc
	broken, writePending, lastWrite, drift               *prometheus.Desc
}

func (c *stateCollector) descs() stateDescs {
	nr := []string{"node", "resource"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(metricsNamespace+"_"+name, help, labels, c.labels)
	}
	return stateDescs{
		free:        d("free_bytes", "Free bytes per NUMA node and resource (memory, hugepages-<size>).", nr),
		reserved:    d("reserved_bytes", "Bytes reserved by admitted pods per NUMA node and resource.", nr),
		allocatable: d("allocatable_bytes", "Allocatable bytes (total minus system reserved) per NUMA node and resource.", nr),
		allocations: d("allocations", "Admitted pods holding an allocation.", nil),
		// A gauge, not a counter: it is the state's number, which the
		// API's answers and the checkpoint carry, kept across restarts
		// and back to 0 after reset-state (as kube-state-metrics'
		// *_metadata_generation).
		generation: d("state_generation", "Generation of the durable state: the number of admissions and releases it holds since it was created (the generation the API answers and the checkpoint carry).", nil),
		broken:     d("broken", "1 when a durable write failed and could not be undone: the daemon refuses every admission and release until it is restarted (its systemd watchdog lapses); else 0.", nil),
		writePending: d("write_pending_seconds", "How long the durable write in progress (a journal append and its fdatasync, or a compaction) has been running; 0 when none runs. "+
			"Admissions wait for it: a disk that does not answer shows here before containers fail to start.", nil),
		lastWrite: d("last_write_success_timestamp_seconds", "Unix time the last durable write (a journal append and its fdatasync, or a compaction) succeeded; 0 before the first since the daemon started.", nil),
		drift:     d("memory_drift_tables", "Memory tables (a NUMA node's memory or hugepages of one size) whose size differed from the checkpoint's when the daemon started; their assignments still fit and were kept (docs/allocator-daemon.md, memory drift).", nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	d := c.descs()
	for _, x := range []*prometheus.Desc{d.free, d.reserved, d.allocatable, d.allocations, d.generation, d.broken, d.writePending, d.lastWrite, d.drift} {
		ch <- x
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.descs()
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	broken := 0.0
	if c.m.broken.Load() {
		broken = 1
	}
	gauge(d.broken, broken)
	pending := 0.0
	if start := c.m.writeStart.Load(); start != 0 {
		pending = time.Since(time.Unix(0, start)).Seconds()
	}
	gauge(d.writePending, pending)
	last := 0.0
	if t := c.m.lastWrite.Load(); t != 0 {
		last = float64(t) / 1e9
	}
	gauge(d.lastWrite, last)
	gauge(d.drift, float64(c.m.drift.Load()))

	s := c.m.snapshot.Load()
	if s == nil {
		return
	}
	gauge(d.allocations, float64(s.allocations))
	gauge(d.generation, float64(s.generation))
	nodes := make([]int, 0, len(s.machine))
	for id := range s.machine {
		nodes = append(nodes, id)
	}
	sort.Ints(nodes)
	for _, id := range nodes {
		node := strconv.Itoa(id)
		for res, t := range s.machine[id].MemoryMap {
			gauge(d.free, float64(t.Free), node, string(res))
			gauge(d.reserved, float64(t.Reserved), node, string(res))
			gauge(d.allocatable, float64(t.Allocatable), node, string(res))
		}
	}
}

// writeBegan and writeEnded bracket one durable write for
// write_pending_seconds and last_write_success_timestamp_seconds.
func (m *metrics) writeBegan(at time.Time) { m.writeStart.Store(at.UnixNano()) }

func (m *metrics) writeEnded(ok bool) {
	m.writeStart.Store(0)
	if ok {
		m.lastWrite.Store(time.Now().UnixNano())
	}
}

// ObserveNRIEvent counts the time the NRI plugin took to answer one
// event (nriplugin.Options.ObserveEvent).
func (s *Server) ObserveNRIEvent(event string, took time.Duration) {
	s.metrics.nriEvents.WithLabelValues(event).Observe(took.Seconds())
}

// ObserveDrift exports numa_partition_allocator_drifted, the verdict of
// the partition's NumaPartitionDrifted Node condition (package
// nodecondition), and returns its setter. It is registered only where
// that check runs: no series is "not checked", not "as planned".
func (s *Server) ObserveDrift() (func(drifted bool), error) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "drifted", ConstLabels: prometheus.Labels{"partition": s.partition},
		Help: "1 when the partition's slice does not run on its planned CPUs and memory nodes, or a hugepage pool of its NUMA nodes does not hold its planned pages (its Node's NumaPartitionDrifted condition is True), else 0.",
	})
	if err := s.metrics.registry.Register(g); err != nil {
		return nil, fmt.Errorf("registering %s_drifted: %w", metricsNamespace, err)
	}
	return func(drifted bool) {
		if drifted {
			g.Set(1)
		} else {
			g.Set(0)
		}
	}, nil
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
