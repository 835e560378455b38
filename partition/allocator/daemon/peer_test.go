package daemon_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

const nobody = 65534

// sharedDir is a state dir an unprivileged process can traverse.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "allocd-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runCLIAs runs the real CLI client with other credentials (the kernel
// then reports those in SO_PEERCRED).
func runCLIAs(t *testing.T, cred *syscall.Credential, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(daemonBinary, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: changing credentials of a child process needs root; run as root (CI does)")
	}
}

func TestNonRootPeerRejected(t *testing.T) {
	requireRoot(t)
	dir := sharedDir(t)
	d := startDaemon(t, daemonSpec{dir: dir, config: writeConfig(t, dir, testConfig())})
	list := []string{"allocations", "--partition", "test", "--socket-dir", dir}

	fi, err := os.Stat(d.socket)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Fatalf("socket %v %v, want 0600 owned by root", fi.Mode(), err)
	}
	if out, err := runCLIAs(t, nil, list...); err != nil {
		t.Fatalf("root is refused: %v\n%s", err, out)
	}
	// First gate: the file mode.
	out, err := runCLIAs(t, &syscall.Credential{Uid: nobody, Gid: nobody}, list...)
	if err == nil || !strings.Contains(out, "permission denied") {
		t.Fatalf("nobody through a 0600 socket: %v\n%s", err, out)
	}
	// Second gate: SO_PEERCRED, checked even when the socket file is
	// opened up by mistake.
	if err := os.Chmod(d.socket, 0o666); err != nil {
		t.Fatal(err)
	}
	out, err = runCLIAs(t, &syscall.Credential{Uid: nobody, Gid: nobody}, list...)
	if err == nil || !strings.Contains(out, "uid 65534 is not root") || !strings.Contains(out, "HTTP 403") {
		t.Fatalf("nobody through a 0666 socket: %v\n%s", err, out)
	}
	// The admission endpoint is closed the same way, and nothing changed.
	manifest := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(manifest, podSpec{uid: "sneaky", memory: []uint64{gib}}.yaml(t), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runCLIAs(t, &syscall.Credential{Uid: nobody, Gid: nobody}, "admit", "-f", manifest, "--partition", "test", "--socket-dir", dir)
	if err == nil || !strings.Contains(out, "HTTP 403") {
		t.Fatalf("nobody admitting: %v\n%s", err, out)
	}
	if l, err := d.Client.Allocations(context.Background()); err != nil || len(l.Allocations) != 0 {
		t.Fatalf("allocations after refused admission: %+v %v", l, err)
	}
	if !strings.Contains(d.stderr.String(), "refused API request") {
		t.Fatalf("refusal not logged:\n%s", d.stderr.String())
	}
	metrics := scrape(t, d.socket)
	if !strings.Contains(metrics, `numa_partition_allocator_peers_denied_total{partition="test"} 2`) {
		t.Fatalf("peers_denied_total not 2:\n%s", grepLines(metrics, "peers_denied"))
	}
}

func TestSocketGroupAdmitsMembers(t *testing.T) {
	requireRoot(t)
	const group = 23456
	dir := sharedDir(t)
	d := startDaemon(t, daemonSpec{dir: dir, config: writeConfig(t, dir, testConfig()), extra: []string{"--socket-group", "23456"}})
	fi, err := os.Stat(d.socket)
	if err != nil || fi.Mode().Perm() != 0o660 || fi.Sys().(*syscall.Stat_t).Gid != group {
		t.Fatalf("socket %v %v, want 0660 group %d", fi.Mode(), err, group)
	}
	list := []string{"allocations", "--partition", "test", "--socket-dir", dir}
	if out, err := runCLIAs(t, &syscall.Credential{Uid: nobody, Gid: group}, list...); err != nil {
		t.Fatalf("primary group member refused: %v\n%s", err, out)
	}
	if out, err := runCLIAs(t, &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{group}}, list...); err != nil {
		t.Fatalf("supplementary group member refused: %v\n%s", err, out)
	}
	// Not in the group: refused by the file mode, and by the peer check
	// when the mode is opened up.
	if err := os.Chmod(d.socket, 0o666); err != nil {
		t.Fatal(err)
	}
	out, err := runCLIAs(t, &syscall.Credential{Uid: nobody, Gid: nobody}, list...)
	if err == nil || !strings.Contains(out, "neither root nor in group 23456") {
		t.Fatalf("non-member: %v\n%s", err, out)
	}
}

func scrape(t *testing.T, socket string) string {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
	resp, err := hc.Get("http://allocator" + daemonapi.PathMetrics)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("metrics: %d %v", resp.StatusCode, err)
	}
	return string(data)
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
