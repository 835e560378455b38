package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/partition/allocator"
)

// TestBackgroundTasks: a background task (the Node condition's loop)
// runs in Run's process, without NRI, with the server, and is stopped and
// waited for when Run returns: its context ends with the daemon's.
func TestBackgroundTasks(t *testing.T) {
	dir, err := os.MkdirTemp("", "bg") // a short socket path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	const gib = uint64(1) << 30
	started, ended := make(chan *Server, 1), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := Options{Partition: "node0", Socket: filepath.Join(dir, "s.sock"), StateDir: filepath.Join(dir, "state"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Config: allocator.Config{Nodes: []allocator.NodeResources{{ID: 0, Memory: 16 * gib, Reserved: map[allocator.ResourceName]uint64{allocator.ResourceMemory: gib}}}, Policy: "single-numa-node", Scope: "container"},
		Background: []func(context.Context, *Server){func(ctx context.Context, srv *Server) {
			started <- srv
			<-ctx.Done()
			time.Sleep(50 * time.Millisecond) // a last write on its way
			close(ended)
		}},
	}
	ran := make(chan error, 1)
	go func() { ran <- Run(ctx, opts) }()
	select {
	case srv := <-started:
		if srv == nil {
			t.Fatal("the task got no server")
		}
	case err := <-ran:
		t.Fatalf("Run returned before the task started: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the background task did not start")
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	default:
		t.Error("Run returned before its background task ended")
	}
}

// TestObserveDrift: the gauge follows the verdict, and is there only
// once registered.
func TestObserveDrift(t *testing.T) {
	s := journalServer(t, t.TempDir())
	families, err := s.metrics.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "numa_partition_allocator_drifted" {
			t.Fatal("drifted is exported before the check runs")
		}
	}
	set, err := s.ObserveDrift()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []bool{true, false, true} {
		set(d)
		want := 0.0
		if d {
			want = 1
		}
		if got := metricValue(t, s, "numa_partition_allocator_drifted", "partition", "t"); got != want {
			t.Errorf("after %v: %v, want %v", d, got, want)
		}
	}
	if _, err := s.ObserveDrift(); err == nil {
		t.Error("registering the gauge twice is no error")
	}
}
