package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// systemdShellScript undoes what systemd does to an ExecStart= value
// before it execs: joins continuation lines (backslash-newline becomes a
// space) and turns "$$" into "$". Only what the renderer emits is handled:
// one single-quoted argument after "/bin/sh -c".
func systemdShellScript(t *testing.T, unit []byte) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)\nExecStart=/bin/sh -c '(.*?)'\n`).FindSubmatch(unit)
	if m == nil {
		t.Fatalf("no /bin/sh -c ExecStart in:\n%s", unit)
	}
	script := strings.ReplaceAll(string(m[1]), "\\\n", " ")
	return strings.ReplaceAll(script, "$$", "$")
}

// TestDaemonsJoinMountNamespace runs the containerd and kubelet units'
// shell wrappers with systemctl and nsenter stubs: each must look up the
// mount namespace holder's MainPID, enter /proc/<pid>/ns/mnt and exec its
// daemon with every setting as a separate argument; with the holder down
// it must fail and say why.
func TestDaemonsJoinMountNamespace(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("SKIPPED LOUDLY: no sh to run the units' wrappers")
	}
	b, err := Render(seedPlan())
	if err != nil {
		t.Fatal(err)
	}
	units := map[string][]byte{}
	for _, f := range b.Files {
		units[f.Path] = f.Content
	}

	bin := t.TempDir()
	stub := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stub("systemctl", `[ "$*" = "show --property=MainPID --value mountns-node1.service" ] || exit 9; echo "$PID"`+"\n")
	stub("nsenter", `for a in "$@"; do echo "[$a]"; done`+"\n")

	for _, tc := range []struct{ unit, want string }{
		{kubeletUnit("node1"), "[/usr/bin/kubelet]\n" +
			"[--config=/etc/numa-partition/kubelet-node1.yaml]\n[--kubeconfig=/etc/kubernetes/kubelet-node1.conf]\n" +
			"[--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet-node1.conf]\n[--cert-dir=/var/lib/kubelet-node1/pki]\n" +
			"[--root-dir=/var/lib/kubelet]\n[--hostname-override=seed-node1]\n" +
			"[--node-labels=numa-partition.io/partition=node1,numa-type=blue]\n"},
		{containerdUnit("node1"), "[/usr/bin/containerd]\n[--config]\n[/etc/numa-partition/containerd-node1.toml]\n"},
	} {
		unit, ok := units[unitPath(tc.unit)]
		if !ok {
			t.Fatalf("no %s in the bundle", tc.unit)
		}
		script := systemdShellScript(t, unit)
		run := func(pid string) (string, error) {
			cmd := exec.Command("sh", "-c", script)
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "PID=" + pid}
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		out, err := run("4242")
		if err != nil {
			t.Fatalf("%s: wrapper failed: %v\n%s", tc.unit, err, out)
		}
		if want := "[--mount=/proc/4242/ns/mnt]\n[--]\n" + tc.want; out != want {
			t.Errorf("%s: nsenter got\n%s\nwant\n%s", tc.unit, out, want)
		}
		out, err = run("0")
		if err == nil || !strings.Contains(out, "mountns-node1.service is not running") {
			t.Errorf("%s with the holder down: want a failure that says so, got %v: %s", tc.unit, err, out)
		}
	}
}
