package nriplugin

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/containerd/nri/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// memPlacer is the allocator without the daemon's checkpoint: the
// decision alone.
type memPlacer struct{ a *allocator.Allocator }

func (m memPlacer) AdmitPod(p *corev1.Pod, h allocator.Hints) (allocator.Decision, error) {
	return m.a.AdmitWithHints(p, h)
}
func (m memPlacer) EvaluatePod(p *corev1.Pod, h allocator.Hints) (allocator.Decision, error) {
	d, err := m.a.AdmitWithHints(p, h)
	if err == nil && d.Admitted {
		_, err = m.a.Release(p.UID)
	}
	return d, err
}
func (m memPlacer) AdoptPod(p *corev1.Pod, n map[string]bitmask.NodeSet) (allocator.Decision, error) {
	return m.a.Adopt(p, n)
}
func (m memPlacer) ReleasePod(uid types.UID) (bool, error) { return m.a.Release(uid) }
func (m memPlacer) Allocations() []allocator.Allocation    { return m.a.Allocations() }

// wideMachine: n NUMA nodes of two 2-thread cores and 16Gi each, nodes a
// hop apart in a ring.
func wideMachine(n int, policy string) (CPUTopology, allocator.Config) {
	var t CPUTopology
	t.Distances = map[int]map[int]int{}
	cfg := allocator.Config{Policy: policy, Scope: "container", PolicyOptions: topologymanager.PolicyOptions{MaxAllowableNUMANodes: max(8, n)}, Distances: t.Distances}
	for i := 0; i < n; i++ {
		t.Cores = append(t.Cores, Core{Node: i, CPUs: bitmask.NewCPUSet(4*i, 4*i+1)}, Core{Node: i, CPUs: bitmask.NewCPUSet(4*i+2, 4*i+3)})
		t.Distances[i] = map[int]int{}
		for j := 0; j < n; j++ {
			hop := min((i-j+n)%n, (j-i+n)%n)
			t.Distances[i][j] = 10 + 10*hop
		}
		nr := allocator.NodeResources{ID: i, Memory: 16 << 30, Hugepages: map[uint64]uint64{}, Reserved: map[allocator.ResourceName]uint64{}}
		if i == 0 {
			nr.Reserved[allocator.ResourceMemory] = 1 << 30
		}
		cfg.Nodes = append(cfg.Nodes, nr)
	}
	return t, cfg
}

// BenchmarkCreateContainer is one nri-mode admission (CreateContainer:
// CPU hints, the topology merge, memory, exclusive cores, the shared
// pool's updates) and its release (StopContainer), with up to 8 other
// containers running; "durable" adds the daemon's checkpoint writes, and
// "kubelet" is kubelet mode's mirror (its own decision, then kubelet's
// placement recorded) instead.
func BenchmarkCreateContainer(b *testing.B) {
	for _, n := range []int{2, 8, 16, 64} {
		for _, policy := range []string{"best-effort", "restricted", "single-numa-node"} {
			for _, mode := range []string{"", ModeNRI + "/durable", ModeKubelet + "/durable"} {
				durable := mode != ""
				if durable && (n != 64 || policy != "restricted") {
					continue
				}
				name := fmt.Sprintf("nodes=%d/%s", n, policy)
				if mode != "" && mode != ModeNRI+"/durable" {
					name += "/" + mode
				} else if durable {
					name += "/durable"
				}
				pmode := ModeNRI
				if mode == ModeKubelet+"/durable" {
					pmode = ModeKubelet
				}
				b.Run(name, func(b *testing.B) {
					topo, cfg := wideMachine(n, policy)
					var placer Placer
					if durable {
						srv, err := daemon.NewServer(daemon.ServerOptions{Partition: "p", Config: cfg, StateDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
						if err != nil {
							b.Fatal(err)
						}
						placer = srv
					} else {
						a, err := allocator.New(cfg)
						if err != nil {
							b.Fatal(err)
						}
						placer = memPlacer{a}
					}
					p, err := New(Options{Partition: "p", Name: "numa-partition-p", Mode: pmode, CPUs: topo, Policy: policy, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, placer)
					if err != nil {
						b.Fatal(err)
					}
					ctx := context.Background()
					for i := 0; i < min(8, n-1); i++ {
						uid := fmt.Sprintf("bg%d", i)
						if _, _, err := p.CreateContainer(ctx, sandbox(uid, ""), ctr("c-"+uid, uid, "app", 2000, 2<<30, 0)); err != nil {
							b.Fatal(err)
						}
					}
					pod, c := sandbox("x", ""), ctr("c-x", "x", "app", 2000, 4<<30, 0)
					for b.Loop() {
						if _, _, err := p.CreateContainer(ctx, pod, c); err != nil {
							b.Fatal(err)
						}
						if _, err := p.StopContainer(ctx, pod, c); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

var _ = api.ContainerState_CONTAINER_RUNNING
