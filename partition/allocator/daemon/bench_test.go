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

	"github.com/numa-partition/numa-partition/partition/allocator"
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

// benchAdmissions drives the real daemon over its socket from `clients`
// goroutines. Each client keeps at most 16 pods: after that it releases its
// oldest before the next admission, so the state stays at the size of a
// busy node (≤ 16×clients pods) and every admission is followed by about
// one release. Latency is the admission round trip only.
func benchAdmissions(b *testing.B, clients int) {
	dir := b.TempDir()
	d := startDaemon(b, daemonSpec{dir: dir, config: writeConfig(b, dir, benchConfig()), global: []string{"--log-level", "warn"}})
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
// the Unix socket, each admission durably checkpointed before its answer.
func BenchmarkAdmitThroughSocket(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d/GOMAXPROCS=%d", clients, runtime.GOMAXPROCS(0)), func(b *testing.B) {
			benchAdmissions(b, clients)
		})
	}
}
