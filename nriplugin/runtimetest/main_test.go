package runtimetest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"

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
	err := daemon.Run(ctx, daemon.Options{
		Partition: partitionName, Config: spec.Config, Socket: spec.Socket, StateDir: spec.StateDir, Logger: log,
		WaitRuntime: spec.Mode == nriplugin.ModeNRI,
		Runtime: func(ctx context.Context, srv *daemon.Server, ready func()) error {
			plugin, err := nriplugin.New(nriplugin.Options{
				Partition: partitionName, Name: pluginName, Mode: spec.Mode, Socket: spec.NRISocket, CPUs: spec.CPUs,
				Policy: spec.Config.Policy, Scope: spec.Config.Scope, Logger: log,
				OnSynchronized: func() {
					ready()
					fmt.Fprintln(os.Stdout, syncedLine)
				},
			}, srv)
			if err != nil {
				return err
			}
			return plugin.Run(ctx)
		},
	})
	if err != nil {
		log.Error("allocator helper failed", "err", err)
		return 1
	}
	return 0
}
