package runtimetest

// What the plugin adds to container creation on a real containerd, and what a stalled API server adds.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/nriplugin"
)

// samplesEnv sets how many containers each configuration of
// BenchmarkContainerCreate creates (default defaultSamples): fewer to
// try it out.
const samplesEnv = "NUMA_PARTITION_RUNTIMETEST_SAMPLES"

const (
	defaultSamples = 1000
	warmup         = 20 // creates per configuration before the samples, not counted
	benchPolicy    = "single-numa-node"
)

func samples(b *testing.B) int {
	v := os.Getenv(samplesEnv)
	if v == "" {
		return defaultSamples
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 {
		b.Fatalf("%s=%q: want a count of at least 2", samplesEnv, v)
	}
	return n
}

// BenchmarkContainerCreate measures CRI CreateContainer, the call kubelet
// waits for, on a real containerd 2 with runc: its p50 and p99 over
// NUMA_PARTITION_RUNTIMETEST_SAMPLES containers (1,000) per
// configuration. The figures are the b.ReportMetric ones (milliseconds);
// ns/op is the whole sampling, setup excluded, and means nothing. One
// pass whatever b.N: run it with -benchtime 1x.
//
// plugin: three containerds, created on in turn, one container on each
// then the next, the order rotated every round, so that drift on a
// shared machine hits all alike: "none" has no NRI plugin connected;
// "plugin" has the allocator's plugin in nri mode (container scope,
// single-numa-node; that containerd requires the plugin, as a
// partition's in nri mode does); "no-op" has, under the same name and
// requirement, a plugin in a process of its own that answers every
// CreateContainer at once: what NRI itself costs (its ttrpc round trip
// and containerd's work around it), the baseline for the allocator's own
// share. The containers alternate between a Burstable one (the
// shared pool, no pinned memory) and a Guaranteed one with a whole core
// (its exclusive core, memory pinned); each is removed (never started)
// before the next, so no other container runs and the exclusive one
// moves none. "added" is the difference between plugin's and none's p50
// and p99, "own" between plugin's and no-op's. Timed in the allocator's
// process: "decision" is the plugin's AdmitPod calls (the allocator's
// decision and its durable write: a journal append and fdatasync), and
// "answer" the plugin's whole CreateContainer (the decision, the CPU
// pool, the log line), what nri_event_duration_seconds counts; the
// rest of "own" is containerd's, applying the answer.
//
// stalled-apiserver: the plugin with a pod cache of a real kube-apiserver
// and etcd (the kubelet's Node credentials), as `allocator serve` wires
// it; container-scope creates in stretches of 50, the API server
// SIGSTOPped during every other stretch: p50 and p99 with it running and
// with it stopped. Then pod scope, where a Guaranteed pod is placed as
// one unit from its spec in the cache: the first containers of pods the
// cache holds, created with the API server running and stopped, and,
// with it stopped, a pod the cache does not hold (it waits for the
// cache's bound and is refused) while Burstable containers (not units)
// are created next to it. The plugin does not hold its lock while it
// waits, but containerd hands its NRI plugins one event at a time: how
// long the Burstable containers wait, and when the plugin got the first
// of them, is logged, not asserted.
func BenchmarkContainerCreate(b *testing.B) {
	b.Run("plugin", benchPlugin)
	b.Run("stalled-apiserver", benchStalledAPIServer)
}

// benchKind is one of the containers the benchmark alternates.
type benchKind struct {
	name string
	qos  string
	res  func(machine) resources
}

var benchKinds = []benchKind{
	{"burstable", burstable, func(machine) resources { return sharedRes }},
	{"exclusive", guaranteed, machine.exclusive},
}

// benchEnv is a containerd with a pod per kind, its samples by kind.
type benchEnv struct {
	*env
	name    string
	pods    []*pod
	n       int
	samples map[string][]time.Duration
}

func newBenchEnv(b *testing.B, name string, e *env) *benchEnv {
	b.Helper()
	e.lengthen(2 * time.Hour)
	be := &benchEnv{env: e, name: name, samples: map[string][]time.Duration{}}
	for _, k := range benchKinds {
		be.pods = append(be.pods, e.runPod(name+"-"+k.name, k.qos))
	}
	return be
}

// lengthen bounds the env's calls by d from now instead of the tests'
// 3 minutes.
func (e *env) lengthen(d time.Duration) {
	old := e.cancel
	e.base, e.cancel = context.WithTimeout(context.Background(), d)
	old()
}

// createOne creates (timed) and removes a container of kind k; with
// record it keeps the time under label.
func (be *benchEnv) createOne(b *testing.B, k int, label string, record bool) {
	b.Helper()
	be.n++
	p := be.pods[k]
	req := &cri.CreateContainerRequest{PodSandboxId: p.id, SandboxConfig: p.config,
		Config: be.containerConfig(p, fmt.Sprintf("c%05d", be.n), benchKinds[k].res(be.m))}
	start := time.Now()
	resp, err := be.rt.CreateContainer(be.ctx(), req)
	took := time.Since(start)
	require.NoError(b, err, "CreateContainer %s on %s", benchKinds[k].name, be.name)
	_, err = be.rt.RemoveContainer(be.ctx(), &cri.RemoveContainerRequest{ContainerId: resp.GetContainerId()})
	require.NoError(b, err)
	if record {
		be.samples[label] = append(be.samples[label], took)
		be.samples[""] = append(be.samples[""], took)
	}
}

func (be *benchEnv) warm(b *testing.B) {
	b.Helper()
	for i := range warmup {
		be.createOne(b, i%len(benchKinds), "", false)
	}
}

// pct is the p-th percentile (0 < p <= 1) by nearest rank, in ms.
func pct(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return math.NaN()
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := max(int(math.Ceil(p*float64(len(s))))-1, 0)
	return float64(s[i]) / float64(time.Millisecond)
}

func summary(d []time.Duration) string {
	return fmt.Sprintf("n=%d p50=%.2f ms p90=%.2f ms p99=%.2f ms max=%.2f ms", len(d), pct(d, 0.5), pct(d, 0.9), pct(d, 0.99), pct(d, 1))
}

func benchPlugin(b *testing.B) {
	n := samples(b)
	none := newBenchEnv(b, "none", newEnv(b))
	ne := newEnvRequiringPlugin(b)
	noop := ne.startAllocator(nriplugin.ModeNRI, benchPolicy, func(s *allocatorSpec) { s.NoOp = true })
	noOp := newBenchEnv(b, "no-op", ne)
	pe := newEnvRequiringPlugin(b)
	timings := filepath.Join(pe.dir, "admit-timings")
	a := pe.startAllocator(nriplugin.ModeNRI, benchPolicy, func(s *allocatorSpec) { s.Timings = timings })
	plugin := newBenchEnv(b, "plugin", pe)
	envs := []*benchEnv{none, noOp, plugin}
	for _, be := range envs {
		be.warm(b)
	}
	b.ResetTimer()
	t0 := time.Now()
	for i := range n {
		k := i % len(benchKinds)
		// Each round in another order (a rotation), so that drift on a
		// shared machine and whatever one create leaves to the next hit
		// every configuration alike.
		r := (i / len(benchKinds)) % len(envs)
		for j := range envs {
			envs[(r+j)%len(envs)].createOne(b, k, benchKinds[k].name, true)
		}
	}
	b.StopTimer()
	elapsed := time.Since(t0)
	a.stop()
	noop.stop()
	decisions := readTimings(b, timings, "admit")
	require.Len(b, decisions, warmup+n, "one AdmitPod per container the plugin placed")
	decisions = decisions[warmup:]
	answers := readTimings(b, timings, nriplugin.EventCreateContainer)
	require.Len(b, answers, warmup+n, "one CreateContainer event per container the plugin placed")
	answers = answers[warmup:]

	for _, label := range []string{"", "burstable", "exclusive"} {
		what := label
		if what == "" {
			what = "all"
		}
		for _, be := range envs {
			b.Logf("%-9s %-7s %s", what, be.name+":", summary(be.samples[label]))
		}
	}
	b.Logf("decision  (AdmitPod in the allocator): %s", summary(decisions))
	b.Logf("answer    (the plugin's CreateContainer, AdmitPod included): %s", summary(answers))
	b.Logf("%d containers a configuration, %d in all, in %s", n, len(envs)*n, elapsed.Round(time.Second))
	all := func(be *benchEnv, p float64) float64 { return pct(be.samples[""], p) }
	for _, be := range envs {
		b.ReportMetric(all(be, 0.5), be.name+"-p50-ms")
		b.ReportMetric(all(be, 0.99), be.name+"-p99-ms")
	}
	// "added": the allocator's plugin against no plugin; "own": against
	// a plugin that does nothing, which is what NRI itself costs.
	b.ReportMetric(all(plugin, 0.5)-all(none, 0.5), "added-p50-ms")
	b.ReportMetric(all(plugin, 0.99)-all(none, 0.99), "added-p99-ms")
	b.ReportMetric(all(plugin, 0.5)-all(noOp, 0.5), "own-p50-ms")
	b.ReportMetric(all(plugin, 0.99)-all(noOp, 0.99), "own-p99-ms")
	b.ReportMetric(pct(decisions, 0.5), "decision-p50-ms")
	b.ReportMetric(pct(decisions, 0.99), "decision-p99-ms")
	b.ReportMetric(pct(answers, 0.5), "answer-p50-ms")
	b.ReportMetric(pct(answers, 0.99), "answer-p99-ms")
}

// readTimings are the helper's timings of kind what ("admit",
// "create_container"), in the order they were taken.
func readTimings(b *testing.B, path, what string) []time.Duration {
	b.Helper()
	data, err := os.ReadFile(path)
	require.NoError(b, err, "the allocator's timings")
	var out []time.Duration
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		kind, n, ok := strings.Cut(line, " ")
		require.True(b, ok, "timing line %q", line)
		if kind != what {
			continue
		}
		ns, err := strconv.ParseInt(n, 10, 64)
		require.NoError(b, err)
		out = append(out, time.Duration(ns))
	}
	return out
}

// benchNode is the Node the benchmark's pod cache watches.
const benchNode = "bench-node"

func benchStalledAPIServer(b *testing.B) {
	n := samples(b)
	requirements(b) // skip before starting a control plane for nothing
	cp := kubeapitest.StartControlPlane(b)
	call := func(method, path string, body, out any) {
		b.Helper()
		require.NoError(b, apiCall(cp, method, path, body, out))
	}
	call("POST", "/api/v1/namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rt"}}, nil)
	call("POST", "/api/v1/namespaces/rt/serviceaccounts", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, nil)
	call("POST", "/api/v1/nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: benchNode}}, nil)
	cert, key := cp.CA.Client(b, "system:node:"+benchNode, "system:nodes")
	kubeconfig := cp.WriteFile(b, "kubelet.conf", cp.Kubeconfig(b, map[string]any{"client-certificate-data": cert, "client-key-data": key}))
	withCache := func(scope string) func(*allocatorSpec) {
		return func(s *allocatorSpec) {
			s.Kubeconfig, s.NodeName, s.Config.Scope = kubeconfig, benchNode, scope
		}
	}
	stopped := false
	stall := func(stop bool) {
		sig := syscall.SIGCONT
		if stop {
			sig = syscall.SIGSTOP
		}
		require.NoError(b, cp.APIServer.Signal(sig))
		stopped = stop
	}
	defer func() {
		if stopped {
			_ = cp.APIServer.Signal(syscall.SIGCONT)
		}
	}()

	// Container scope: the cache is there, nobody reads it.
	ce := newEnvRequiringPlugin(b)
	ca := ce.startAllocator(nriplugin.ModeNRI, benchPolicy, withCache("container"))
	waitCacheSynced(b, ca, 0)
	cs := newBenchEnv(b, "container-scope", ce)
	cs.warm(b)
	block := min(50, max(n/4, 1)) // containers per stretch, running or stopped
	b.ResetTimer()
	for i := range 2 * n {
		if i%block == 0 {
			stall((i/block)%2 == 1)
		}
		label := "running"
		if stopped {
			label = "stopped"
		}
		cs.createOne(b, i%len(benchKinds), label, true)
	}
	stall(false)
	b.StopTimer()
	b.Logf("container scope, API server running: %s", summary(cs.samples["running"]))
	b.Logf("container scope, API server stopped: %s", summary(cs.samples["stopped"]))
	b.ReportMetric(pct(cs.samples["running"], 0.5), "running-p50-ms")
	b.ReportMetric(pct(cs.samples["running"], 0.99), "running-p99-ms")
	b.ReportMetric(pct(cs.samples["stopped"], 0.5), "stopped-p50-ms")
	b.ReportMetric(pct(cs.samples["stopped"], 0.99), "stopped-p99-ms")

	// Pod scope: Guaranteed pods are units, their spec read from the cache.
	pe := newEnvRequiringPlugin(b)
	pe.lengthen(time.Hour)
	pa := pe.startAllocator(nriplugin.ModeNRI, benchPolicy, withCache("pod"))
	unitRes := resources{cpuRequestMilli: 500, cpuLimitMilli: 500, memoryLimit: 64 * mi} // pinned memory, shared CPUs
	const units = 20
	var known []*pod
	for i := range units {
		name := fmt.Sprintf("unit-%02d", i)
		var created corev1.Pod
		call("POST", "/api/v1/namespaces/rt/pods", apiPod(name, unitRes), &created)
		known = append(known, pe.runPodUID(name, guaranteed, string(created.UID)))
	}
	waitCacheSynced(b, pa, units)
	unknown := pe.runPod("not-in-cache", guaranteed)
	shared := pe.runPod("shared", burstable)
	createIn := func(p *pod, name string, r resources) (time.Duration, error) {
		start := time.Now()
		c, err := pe.create(p, name, r)
		took := time.Since(start)
		if err == nil {
			pe.remove(c)
		}
		return took, err
	}
	var unitRunning, unitStopped []time.Duration
	for i, p := range known {
		stall(i%2 == 1)
		took, err := createIn(p, "c", unitRes)
		require.NoError(b, err, "the first container of unit pod %s, API server stopped: %v", p.name, stopped)
		if stopped {
			unitStopped = append(unitStopped, took)
		} else {
			unitRunning = append(unitRunning, took)
		}
		stall(false)
		pe.removePod(p) // releases the unit
	}
	stall(true)
	type result struct {
		took time.Duration
		err  error
	}
	waited := make(chan result, 1)
	sent := time.Now()
	go func() {
		took, err := createIn(unknown, "c", unitRes)
		waited <- result{took, err}
	}()
	time.Sleep(200 * time.Millisecond) // in the plugin, waiting for the cache
	var beside []time.Duration
	var unit result
	for i := 0; ; i++ {
		took, err := createIn(shared, fmt.Sprintf("beside-%03d", i), sharedRes)
		require.NoError(b, err, "a Burstable container next to the waiting unit pod")
		beside = append(beside, took)
		select {
		case unit = <-waited:
		default:
			continue
		}
		break
	}
	stall(false)
	pe.removePod(unknown)
	pe.removePod(shared)
	b.Logf("pod scope, first container of a unit pod the cache holds, API server running: %s", summary(unitRunning))
	b.Logf("pod scope, first container of a unit pod the cache holds, API server stopped: %s", summary(unitStopped))
	b.Logf("pod scope, API server stopped, unit pod the cache does not hold: %s, then %v", unit.took.Round(time.Millisecond), unit.err)
	b.Logf("pod scope, API server stopped, Burstable containers created while it waited: %v; the plugin got the first %s after the unit pod's",
		roundAll(beside), placedAt(b, pa, "beside-000").Sub(sent).Round(time.Millisecond))
	b.ReportMetric(pct(unitStopped, 1), "unit-stopped-max-ms")
	b.ReportMetric(float64(unit.took)/float64(time.Millisecond), "unit-uncached-ms")
	b.ReportMetric(pct(beside, 1), "beside-uncached-max-ms")
}

// placedAt is when the allocator logged container name placed.
func placedAt(b *testing.B, a *allocatorProc, name string) time.Time {
	b.Helper()
	for _, line := range strings.Split(a.logText(), "\n") {
		if !strings.Contains(line, `msg="container placed"`) || !strings.Contains(line, " container="+name+" ") {
			continue
		}
		stamp, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		require.NoError(b, err, "the time of %q", line)
		return at
	}
	b.Fatalf("the allocator did not log container %s placed", name)
	return time.Time{}
}

func roundAll(d []time.Duration) []time.Duration {
	out := make([]time.Duration, len(d))
	for i, x := range d {
		out[i] = x.Round(100 * time.Microsecond)
	}
	return out
}

// apiPod is a pod of namespace rt bound to benchNode, one container c
// with requests = limits r.
func apiPod(name string, r resources) *corev1.Pod {
	l := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(r.cpuLimitMilli, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(r.memoryLimit, resource.BinarySI),
	}
	no := false
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "rt"},
		Spec: corev1.PodSpec{NodeName: benchNode, AutomountServiceAccountToken: &no,
			Containers: []corev1.Container{{Name: "c", Image: workloadImage, Resources: corev1.ResourceRequirements{Requests: l, Limits: l}}}}}
}

// apiCall sends an admin request to the control plane and decodes a 2xx
// answer into out.
func apiCall(cp *kubeapitest.ControlPlane, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, cp.URL+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := cp.Admin.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		return fmt.Errorf("%s %s: %s: %w", method, path, resp.Status, err)
	}
	if resp.StatusCode > 299 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// waitCacheSynced waits until the allocator's pod cache has listed its
// Node's pods and holds at least pods of them (its metrics).
func waitCacheSynced(b *testing.B, a *allocatorProc, pods int) {
	b.Helper()
	a.e.waitFor(fmt.Sprintf("the pod cache synced with %d pods", pods), 60*time.Second, func() (bool, string) {
		m, err := a.metrics()
		if err != nil {
			return false, err.Error()
		}
		synced, held := m["numa_partition_allocator_pod_cache_synced"], m["numa_partition_allocator_pod_cache_pods"]
		return synced == 1 && held >= float64(pods), fmt.Sprintf("synced %v, pods %v", synced, held)
	})
}

// metrics are the allocator's metrics without labels' values, by name.
func (a *allocatorProc) metrics() (map[string]float64, error) {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", a.client.Socket)
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://allocator/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		name, _, _ := strings.Cut(f[0], "{")
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}
