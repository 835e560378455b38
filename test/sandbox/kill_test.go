package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCLIKilledApply SIGKILLs the real numa-partition apply at points
// spread over its run (between and inside steps: a fixed fraction of a
// full apply's duration each), against the sandbox systemd, and checks
// after each kill that status says what happened, the next apply
// finishes the job, and remove leaves no unit file, drop-in or record.
func TestCLIKilledApply(t *testing.T) {
	s := Get(t)
	bin := installCLI(t, s)
	must(t, os.MkdirAll(s.Path("etc/numa-partition"), 0o755))
	cfg := s.Path("etc/numa-partition/config.toml")
	cfgText, err := exec.Command(bin, "--sysfs", s.Path("sys"), "config", "init", "--generic").Output()
	must(t, err)
	must(t, os.WriteFile(cfg, cfgText, 0o644))
	args := func(cmd ...string) []string {
		return append([]string{"--log-level", "error", "--config", cfg}, append(cmd, "--root", s.Root)...)
	}
	run := func(cmd ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, args(cmd...)...).CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		return string(out), 0
	}
	leftovers := func() []string {
		var left []string
		for _, pat := range []string{"etc/systemd/system/node[0-9]*.slice*", "etc/systemd/system/kubelet-node*", "etc/systemd/system/containerd-node*",
			"etc/systemd/system/numa-*", "etc/systemd/system/*.d/*numa-partition*", "var/lib/numa-partition/applied.json"} {
			m, _ := filepath.Glob(s.Path(pat))
			left = append(left, m...)
		}
		return left
	}

	// How long a whole apply takes here (the second one: the first also
	// pays for cold caches), to spread the kills over it.
	var full time.Duration
	for range 2 {
		t0 := time.Now()
		if out, code := run("apply", "--hostname", "sandbox", standInPreflight); code != 0 {
			t.Fatalf("apply: exit %d\n%s", code, out)
		}
		full = time.Since(t0)
		if out, code := run("remove"); code != 0 {
			t.Fatalf("remove: exit %d\n%s", code, out)
		}
	}
	const kills = 24
	interrupted := 0
	for i := range kills {
		delay := full * time.Duration(i) / kills
		cmd := exec.Command(bin, args("apply", "--hostname", "sandbox", standInPreflight)...)
		must(t, cmd.Start())
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		what := "killed after " + delay.Round(time.Millisecond).String()

		out, code := run("status", "--no-api")
		t.Logf("%s: status exit %d, %s", what, code, strings.SplitN(out, "\n", 2)[0])
		switch {
		case strings.Contains(out, "was interrupted"):
			interrupted++
			if code != 1 {
				t.Errorf("%s: status says interrupted but exits %d", what, code)
			}
		case strings.HasPrefix(out, "NOT-APPLIED"), code == 0, strings.Contains(out, "DEGRADED"):
			// killed before the record, or after the apply finished
			// (the stand-ins may still be starting).
		default:
			t.Errorf("%s: status exit %d:\n%s", what, code, out)
		}
		if out, code := run("apply", "--hostname", "sandbox", standInPreflight); code != 0 {
			t.Fatalf("%s: the next apply fails: exit %d\n%s", what, code, out)
		}
		if out, _ := run("status", "--no-api"); strings.Contains(out, "interrupted") {
			t.Fatalf("%s: still interrupted after the next apply:\n%s", what, out)
		}
		if out, code := run("remove"); code != 0 {
			t.Fatalf("%s: remove: exit %d\n%s", what, code, out)
		}
		if left := leftovers(); len(left) > 0 {
			t.Fatalf("%s: remove left %v", what, left)
		}
	}
	if interrupted == 0 {
		t.Errorf("no kill of %d landed inside an apply (a whole one takes %s): the test tested nothing", kills, full)
	}
	t.Logf("%d of %d kills landed inside an apply of %s", interrupted, kills, full)
}
