package sandbox

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if playRole() {
		return
	}
	os.Exit(Main(m))
}

// TestSandboxIsARealIsolatedSystemd checks what every user of the sandbox
// relies on: a systemd PID 1 reachable over its bus from the host, with its
// own root (writes stay in the overlay) and its own cgroup subtree.
func TestSandboxIsARealIsolatedSystemd(t *testing.T) {
	s := Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t.Logf("sandbox %s: PID 1 = %d on the host, booted in %v", s.Name, s.PID1, s.Boot)

	comm, err := os.ReadFile("/proc/" + strconv.Itoa(s.PID1) + "/comm")
	if err != nil || strings.TrimSpace(string(comm)) != "systemd" {
		t.Fatalf("PID 1 comm = %q, %v; want systemd", comm, err)
	}
	c, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.SystemState(ctx)
	if err != nil || (st != "running" && st != "degraded") {
		t.Fatalf("SystemState = %q, %v", st, err)
	}
	u, err := c.Unit(ctx, "dbus.service")
	if err != nil || u.ActiveState != "active" {
		t.Fatalf("dbus.service = %+v, %v", u, err)
	}

	marker := "/etc/npsandbox-marker-" + s.Name
	if err := os.WriteFile(s.Path(marker), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("a file written in the sandbox appeared on the host: %v", err)
	}
	out, err := s.Exec(ctx, "cat", "/proc/1/cgroup")
	if err != nil {
		t.Fatalf("exec: %v: %s", err, out)
	}
	if strings.Contains(string(out), "npsandbox") {
		t.Errorf("the sandbox sees its host cgroup path; want a cgroup namespace root:\n%s", out)
	}
}
