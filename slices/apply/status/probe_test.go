package status

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
)

// status probes a partition's allocator over its socket below the root,
// with the daemon's own client: a real daemon answers ok, a missing
// socket is unreachable.
func TestProbeAllocator(t *testing.T) {
	root := t.TempDir()
	socket := "/run/numa-partition/node0.sock"
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(socket)), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := allocator.Config{Policy: "best-effort", Nodes: []allocator.NodeResources{{ID: 0, Memory: 4 << 30,
		Reserved: map[allocator.ResourceName]uint64{allocator.ResourceMemory: 1 << 30}}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Partition: "node0", Config: cfg, Socket: filepath.Join(root, socket), StateDir: t.TempDir(),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for !probeUnix(context.Background(), root, socket, time.Second).OK && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}

	p := probeUnix(context.Background(), root, socket, 5*time.Second)
	if !p.OK || p.Endpoint != "unix:"+socket || p.Detail != `HTTP 200 status "ok"` {
		t.Errorf("a serving daemon: %+v", p)
	}
	p = probeUnix(context.Background(), root, "/run/numa-partition/node1.sock", 5*time.Second)
	if p.OK || !strings.HasPrefix(p.Detail, "unreachable: ") {
		t.Errorf("no daemon: %+v", p)
	}

	// Below another root, links to that daemon's socket (outside it) are
	// not followed: the socket itself a link is refused, naming it, and a
	// linked directory resolves inside the root, where there is no socket.
	other := t.TempDir()
	link := filepath.Join(other, socket)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, socket), link); err != nil {
		t.Fatal(err)
	}
	if p := probeUnix(context.Background(), other, socket, 5*time.Second); p.OK || !strings.Contains(p.Detail, link+" is a symbolic link") {
		t.Errorf("the socket a link out of the root: %+v", p)
	}
	if err := os.Symlink(filepath.Join(root, "run/numa-partition"), filepath.Join(other, "run/linked")); err != nil {
		t.Fatal(err)
	}
	if p := probeUnix(context.Background(), other, "/run/linked/node0.sock", 5*time.Second); p.OK {
		t.Errorf("the socket's directory a link out of the root: %+v", p)
	}
}
