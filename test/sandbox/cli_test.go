package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// standInPreflight is what apply's preflight must let through for the
// stand-in kubelets (playRole): they join no cluster, so there is no CA
// and no kubeconfig, and the test machine's swap is not theirs to refuse.
const standInPreflight = "--ignore-preflight-errors=ClientCA,Kubeconfig,Swap"

// playRole makes the test binary stand in for containerd or kubelet when a
// sandbox unit runs it under that name: containerd says READY and idles,
// kubelet serves /healthz on the healthzPort of its --config. It returns
// false for any other name.
func playRole() bool {
	switch filepath.Base(os.Args[0]) {
	case "containerd":
		_, _ = daemon.SdNotify(false, daemon.SdNotifyReady)
		for {
			time.Sleep(time.Hour)
		}
	case "kubelet":
		port := 10248
		for _, a := range os.Args[1:] {
			if cfg, ok := strings.CutPrefix(a, "--config="); ok {
				b, err := os.ReadFile(cfg)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				for _, l := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(strings.TrimSpace(l), "healthzPort: "); ok {
						fmt.Sscan(v, &port)
					}
				}
			}
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
		fmt.Fprintln(os.Stderr, http.ListenAndServe(fmt.Sprintf("127.0.0.1:%d", port), mux))
		os.Exit(1)
	}
	return false
}

// TestCLIAgainstSandbox runs the real pipeline of the numa-partition
// binary (discover the sandbox's /sys, plan with the default config,
// render, apply) against the sandbox: apply, re-apply, status, remove,
// dry-run. containerd and kubelet are stand-ins (this test binary); the
// allocator and the hugepages oneshot are the real numa-partition.
func TestCLIAgainstSandbox(t *testing.T) {
	s := Get(t)
	bin := installCLI(t, s)
	runAny := func(args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, append([]string{"--log-level", "error"}, args...)...).CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return string(out), 0
	}
	run := func(wantExit int, args ...string) string {
		t.Helper()
		out, code := runAny(args...)
		if code != wantExit {
			t.Fatalf("numa-partition %s: exit %d, want %d\n%s", strings.Join(args, " "), code, wantExit, out)
		}
		return out
	}
	// Nothing is prepared on the host: containerd's units create their
	// device-plugins directories (StateDirectory=) and the allocators read
	// the plan apply rendered, so the config may live anywhere.
	must(t, os.MkdirAll(s.Path("etc/numa-partition"), 0o755))
	cfg := s.Path("etc/numa-partition/config.toml")
	cfgText, err := exec.Command(bin, "--sysfs", s.Path("sys"), "config", "init", "--generic").Output()
	must(t, err)
	must(t, os.WriteFile(cfg, cfgText, 0o644))
	root := []string{"--root", s.Root}
	hostname := []string{"--hostname", "sandbox", standInPreflight}
	runAnyBase := runAny
	runAny = func(args ...string) (string, int) {
		t.Helper()
		return runAnyBase(append([]string{"--config", cfg}, args...)...)
	}

	sandboxLinksBefore := sandboxLinks(t, s)
	out := run(0, append(append([]string{"apply"}, root...), hostname...)...)
	if !strings.Contains(out, "applied generation 1") {
		t.Fatalf("apply said:\n%s", out)
	}
	t.Logf("apply:\n%s", out)
	out = run(0, append(append([]string{"apply"}, root...), hostname...)...)
	if !strings.HasPrefix(out, "no changes") {
		t.Fatalf("re-apply said:\n%s", out)
	}

	var st struct {
		Health     string `json:"health"`
		Generation int    `json:"generation"`
		Partitions []struct {
			Name    string `json:"name"`
			Network *struct {
				Namespace string   `json:"namespace"`
				Address   string   `json:"address"`
				Present   bool     `json:"present"`
				Up        bool     `json:"up"`
				Addresses []string `json:"addresses"`
			} `json:"network"`
			Kubelet   struct{ OK bool }
			Allocator struct {
				OK     bool
				Detail string
			}
		} `json:"partitions"`
		Problems []string `json:"problems"`
	}
	var raw string
	for range 50 { // the stand-in kubelet and the allocator need a moment
		var code int
		// --no-api: the stand-in kubelets have no cluster to join.
		raw, code = runAny(append([]string{"-o", "json", "status", "--no-api"}, root...)...)
		if code == 2 {
			t.Fatalf("status failed:\n%s", raw)
		}
		must(t, json.Unmarshal([]byte(raw), &st))
		if st.Health == "healthy" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st.Health != "healthy" || st.Generation != 1 || len(st.Partitions) == 0 || !st.Partitions[0].Kubelet.OK || !st.Partitions[0].Allocator.OK {
		t.Fatalf("status after apply:\n%s", raw)
	}
	// Each partition in a network namespace of its own (the default),
	// its stand-in kubelet answering healthz there, on the standard port.
	hostLinks := sandboxLinks(t, s)
	for i, p := range st.Partitions {
		n := p.Network
		if n == nil || !n.Present || !n.Up || len(n.Addresses) != 1 || n.Addresses[0] != n.Address ||
			n.Address != fmt.Sprintf("10.212.0.%d/24", i+2) || n.Namespace != "np-"+p.Name {
			t.Fatalf("partition %s's network in status: %+v\n%s", p.Name, n, raw)
		}
		if !strings.Contains(hostLinks, "np-"+p.Name+"@") {
			t.Fatalf("no host end np-%s in the sandbox's links:\n%s", p.Name, hostLinks)
		}
	}
	if !strings.Contains(hostLinks, " npbr0:") {
		t.Fatalf("no bridge npbr0 in the sandbox's links:\n%s", hostLinks)
	}
	if out, err := exec.Command("nsenter", "-t", strconv.Itoa(s.PID1), "-n", "bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/10248").CombinedOutput(); err == nil {
		t.Fatalf("a kubelet's healthz answers in the host's namespace: it is not in its own\n%s", out)
	}
	names := make([]string, len(st.Partitions))
	for i, p := range st.Partitions {
		names[i] = p.Name
	}
	checkNodeDirs(t, s, names)
	checkDaemonCrashes(t, s, names[0], func() bool {
		_, code := runAny(append([]string{"status", "--no-api"}, root...)...)
		return code == 0
	})
	run(0, append([]string{"status", "--no-api"}, root...)...)
	// Asking the API: a healthy kubelet without a kubeconfig has not joined.
	out = run(1, append([]string{"status"}, root...)...)
	if !strings.Contains(out, "kubelet of node0 is healthy but has not joined: /etc/kubernetes/kubelet-node0.conf does not exist") ||
		!strings.Contains(out, "sandbox-node0 -") {
		t.Fatalf("status with the API check:\n%s", out)
	}

	out = run(0, append([]string{"remove"}, root...)...)
	if !strings.Contains(out, "removed generation 1") {
		t.Fatalf("remove said:\n%s", out)
	}
	// remove leaves no namespace, link or bridge behind.
	if links := sandboxLinks(t, s); links != sandboxLinksBefore {
		t.Fatalf("links after remove:\n%s\nbefore apply:\n%s", links, sandboxLinksBefore)
	}
	if entries, _ := os.ReadDir(s.Path("run/netns")); len(entries) != 0 {
		t.Fatalf("namespaces left in /run/netns: %v", entries)
	}
	out = run(1, append([]string{"status"}, root...)...)
	if !strings.HasPrefix(out, "NOT-APPLIED") {
		t.Fatalf("status after remove:\n%s", out)
	}
	out = run(0, append(append([]string{"apply", "--dry-run"}, root...), hostname...)...)
	if !strings.Contains(out, "+++ b/etc/systemd/system/kubelet-node0.service") || !strings.Contains(out, "would run") {
		t.Fatalf("dry-run said:\n%s", out)
	}
	if _, err := os.Stat(s.Path("etc/systemd/system/kubelet-node0.service")); !os.IsNotExist(err) {
		t.Fatalf("dry-run wrote a file: %v", err)
	}
}

// sandboxLinks lists the links of the sandbox's own network namespace
// (`ip -o link`, names and kinds only).
func sandboxLinks(t *testing.T, s *Sandbox) string {
	t.Helper()
	out, err := exec.Command("nsenter", "-t", strconv.Itoa(s.PID1), "-n", "ip", "-o", "link").CombinedOutput()
	if err != nil {
		t.Fatalf("ip link in the sandbox: %v\n%s", err, out)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			names = append(names, " "+f[1])
		}
	}
	return strings.Join(names, "\n")
}

// installCLI builds numa-partition into the sandbox's /usr/bin, with this
// test binary as the stand-in containerd and kubelet (playRole), removed
// again when the test ends; it returns the binary's path.
func installCLI(t *testing.T, s *Sandbox) string {
	t.Helper()
	bin := s.Path("usr/bin/numa-partition")
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building numa-partition needs the go command in PATH: %v", err)
	}
	if out, err := exec.Command(gobin, "build", "-o", bin, "../../cmd/numa-partition").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	self, err := os.Executable()
	must(t, err)
	for _, role := range []string{"usr/bin/containerd", "usr/bin/kubelet"} {
		must(t, copyFile(self, s.Path(role)))
	}
	t.Cleanup(func() {
		for _, p := range []string{bin, s.Path("usr/bin/containerd"), s.Path("usr/bin/kubelet")} {
			os.Remove(p)
		}
	})
	return bin
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
