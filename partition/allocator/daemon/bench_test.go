package daemon_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/fromplan"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// benchConfig is roomy enough that no admission is rejected: the benchmark
// measures the accepted path (decision + checkpoint fsync + answer).
func benchConfig() allocator.Config {
	cfg := testConfig()
	for i := range cfg.Nodes {
		cfg.Nodes[i].Memory = 512 * gib
	}
	return cfg
}

// benchAdmissions drives the real daemon started as spec says over its
// socket from `clients` goroutines. Each client keeps at most 16 pods:
// after that it releases its oldest before the next admission, so the
// state stays at the size of a busy node (≤ 16×clients pods) and every
// admission is followed by about one release. Latency is the admission
// round trip only.
func benchAdmissions(b *testing.B, spec daemonSpec, clients int) {
	d := startDaemon(b, spec)
	// Pre-render manifests: the benchmark measures the daemon, not YAML encoding.
	manifests := make([][]byte, b.N)
	for i := range manifests {
		manifests[i] = podSpec{uid: fmt.Sprintf("bench-%07d", i), memory: []uint64{64 * mib}}.yaml(b)
	}
	latencies := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []string
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				if len(mine) >= 16 {
					if _, err := d.Client.Release(context.Background(), mine[0]); err != nil {
						failed.Store(err)
						return
					}
					mine = mine[1:]
				}
				t0 := time.Now()
				resp, err := d.Client.Admit(context.Background(), manifests[i])
				latencies[i] = time.Since(t0)
				if err != nil || !resp.Decision.Admitted {
					failed.Store(fmt.Errorf("admission %d: %+v %v", i, resp.Decision, err))
					return
				}
				mine = append(mine, string(resp.Decision.PodUID))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	slices.Sort(latencies)
	q := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "admissions/s")
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op") // wall time per op is meaningless with parallel clients
}

// BenchmarkAdmitThroughSocket: admissions per second and latency through
// the Unix socket, each admission durably checkpointed before its answer:
// on a two-node partition, then (nodes=N) on the largest partitions
// (issue #41): partition "all" of numatest's allocator shape of 16, 34
// and 64 NUMA nodes, planned from the shape's synthetic sysfs tree and
// config (nri mode, the allocator's own placement, above 8 nodes).
func BenchmarkAdmitThroughSocket(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d/GOMAXPROCS=%d", clients, runtime.GOMAXPROCS(0)), func(b *testing.B) {
			dir := b.TempDir()
			benchAdmissions(b, daemonSpec{dir: dir, config: writeConfig(b, dir, benchConfig()), global: []string{"--log-level", "warn"}}, clients)
		})
	}
	for _, nodes := range []int{16, 34, 64} {
		b.Run(fmt.Sprintf("nodes=%d/clients=1/GOMAXPROCS=%d", nodes, runtime.GOMAXPROCS(0)), func(b *testing.B) {
			benchAdmissions(b, shapeSpec(b, nodes), 1)
		})
	}
}

// shapeSpec runs the daemon of partition "all" of numatest's allocator
// shape of that many nodes with the allocator config its plan gives
// (fromplan.AllocatorConfig, what the daemon computes when planning itself): the
// daemon planning from --config waits, in nri mode, for its
// containerd's NRI socket before it is ready, and a test has none.
func shapeSpec(t testing.TB, nodes int) daemonSpec {
	t.Helper()
	s, err := numatest.AllocatorShape(nodes)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := numa.NewFS(s.WriteTemp(t)).Discover()
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(s.Name+".toml", []byte(s.Config))
	if err != nil {
		t.Fatal(err)
	}
	facts := planner.ExampleFacts
	facts.Cgroup = s.Cgroup
	plan, err := planner.NewPlanFor(topo, facts, c)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(plan.Partitions, func(p planner.Partition) bool { return p.Name == "all" })
	if i < 0 {
		t.Fatalf("no partition \"all\" in the plan of %s", s.Name)
	}
	cfg, err := fromplan.AllocatorConfig(plan.Partitions[i], topo)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return daemonSpec{dir: dir, partition: "all", config: writeConfig(t, dir, cfg), global: []string{"--log-level", "warn"}}
}

// TestServeBigPartitions: the daemon plans and serves numatest's
// one-partition shapes of 16, 34 and 64 nodes, every node in its
// machine, and admits a pod through its socket.
func TestServeBigPartitions(t *testing.T) {
	for _, nodes := range []int{16, 34, 64} {
		t.Run(fmt.Sprintf("nodes=%d", nodes), func(t *testing.T) {
			d := startDaemon(t, shapeSpec(t, nodes))
			st, err := d.Client.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(st.State.Machine) != nodes {
				t.Fatalf("%d nodes in the daemon's machine, want %d", len(st.State.Machine), nodes)
			}
			resp, err := d.Client.Admit(context.Background(), podSpec{uid: "big", memory: []uint64{64 * mib}}.yaml(t))
			if err != nil || !resp.Decision.Admitted {
				t.Fatalf("%+v %v", resp.Decision, err)
			}
		})
	}
}
