package runtimetest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/nriplugin"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
)

// helperEnv, when set, makes the test binary the allocator daemon instead
// of running tests: its value is the allocatorSpec as JSON. The tests
// start it as a process of its own so that they can kill -9 it.
const helperEnv = "NUMA_PARTITION_RUNTIMETEST_ALLOCATOR"

// syncedLine is what the helper prints on stdout after every
// synchronization with containerd (the plugin is then in the containers'
// path).
const syncedLine = "synchronized with containerd"

// partitionName is the partition the tests' allocator serves.
const partitionName = "node0"

// pluginName is its plugin's name at containerd, which the containerd
// of requiringPlugin requires (as a partition's in nri mode).
const pluginName = "numa-partition-" + partitionName

// allocatorSpec is what the helper process serves.
type allocatorSpec struct {
	Mode      string                `json:"mode"`
	Config    allocator.Config      `json:"config"`
	CPUs      nriplugin.CPUTopology `json:"cpus"`
	Socket    string                `json:"socket"`
	StateDir  string                `json:"stateDir"`
	NRISocket string                `json:"nriSocket"`
	// Kubeconfig, when set, gives the plugin a pod cache of Node
	// NodeName's pods read with it (kubeapi.PodCache, waiting PodWait at
	// most for a pod it does not hold, 0 its default), wired as
	// `numa-partition allocator serve` wires it in nri mode.
	Kubeconfig string        `json:"kubeconfig,omitempty"`
	NodeName   string        `json:"nodeName,omitempty"`
	PodWait    time.Duration `json:"podWait,omitempty"`
	// Timings, when set, is a file the helper writes when it exits: how
	// long each of the plugin's AdmitPod calls took (the allocator's
	// decision and its durable write) and each CreateContainer event (the
	// plugin's whole answer), in nanoseconds, one a line: "admit N" or
	// "create_container N".
	Timings string `json:"timings,omitempty"`
	// NoOp, when set, makes the helper a plugin under the same name that
	// answers every CreateContainer at once and keeps no state: what NRI
	// itself costs a container's creation (BenchmarkContainerCreate's
	// baseline for the allocator's own share).
	NoOp bool `json:"noOp,omitempty"`
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(serveAllocator(spec))
	}
	code := m.Run()
	if images.dir != "" {
		_ = os.RemoveAll(images.dir)
	}
	os.Exit(code)
}

// serveAllocator runs the allocator daemon with its NRI plugin, wired as
// `numa-partition allocator serve` wires them (cmd/numa-partition), until
// SIGTERM.
func serveAllocator(raw string) int {
	var spec allocatorSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "allocator helper:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if spec.NoOp {
		if err := serveNoOp(ctx, spec.NRISocket); err != nil {
			log.Error("no-op plugin failed", "err", err)
			return 1
		}
		return 0
	}
	timed := &timedPlacer{}
	err := daemon.Run(ctx, daemon.Options{
		Partition: partitionName, Config: spec.Config, Socket: spec.Socket, StateDir: spec.StateDir, Logger: log,
		WaitRuntime: spec.Mode == nriplugin.ModeNRI,
		Runtime: func(ctx context.Context, srv *daemon.Server, ready func()) error {
			opts := nriplugin.Options{
				Partition: partitionName, Name: pluginName, Mode: spec.Mode, Socket: spec.NRISocket, CPUs: spec.CPUs,
				Policy: spec.Config.Policy, Scope: spec.Config.Scope, Logger: log,
				OnSynchronized: func() {
					ready()
					fmt.Fprintln(os.Stdout, syncedLine)
				},
				ObserveEvent: func(event string, took time.Duration) {
					srv.ObserveNRIEvent(event, took)
					if spec.Timings != "" && event == nriplugin.EventCreateContainer {
						timed.add(event, took)
					}
				},
			}
			if spec.Kubeconfig != "" {
				pods := kubeapi.NewPodCache(spec.Kubeconfig, spec.NodeName, spec.PodWait, kubeapi.Options{}, log)
				if err := srv.ObservePodCache(pods.Status); err != nil {
					return err
				}
				go pods.Run(ctx)
				opts.Pods = pods
			}
			placer := nriplugin.Placer(srv)
			if spec.Timings != "" {
				timed.Placer = srv
				placer = timed
			}
			plugin, err := nriplugin.New(opts, placer)
			if err != nil {
				return err
			}
			return plugin.Run(ctx)
		},
	})
	if spec.Timings != "" {
		if werr := timed.write(spec.Timings); werr != nil {
			log.Error("writing the admissions' timings", "err", werr)
			return 1
		}
	}
	if err != nil {
		log.Error("allocator helper failed", "err", err)
		return 1
	}
	return 0
}

// noOpPlugin is an NRI plugin that changes nothing.
type noOpPlugin struct{}

func (noOpPlugin) Synchronize(context.Context, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error) {
	fmt.Fprintln(os.Stdout, syncedLine)
	return nil, nil
}

func (noOpPlugin) CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return nil, nil, nil
}

// serveNoOp connects the no-op plugin under the allocator's name (its
// index, too) until ctx ends.
func serveNoOp(ctx context.Context, socket string) error {
	s, err := stub.New(noOpPlugin{}, stub.WithPluginName(pluginName), stub.WithPluginIdx("10"), stub.WithSocketPath(socket))
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		s.Stop()
		return nil
	}
}

// timedPlacer is the helper's placer when the spec asks for timings: the
// daemon, each AdmitPod timed.
type timedPlacer struct {
	nriplugin.Placer
	mu    sync.Mutex
	lines strings.Builder
}

func (p *timedPlacer) AdmitPod(pod *corev1.Pod, extra allocator.Hints) (allocator.Decision, error) {
	start := time.Now()
	d, err := p.Placer.AdmitPod(pod, extra)
	p.add("admit", time.Since(start))
	return d, err
}

func (p *timedPlacer) add(what string, took time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(&p.lines, what, took.Nanoseconds())
}

func (p *timedPlacer) write(path string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return os.WriteFile(path, []byte(p.lines.String()), 0o644)
}
