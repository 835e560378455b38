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

// TestKubeletJoinsContainerdNamespace runs the kubelet unit's shell
// wrapper with systemctl and nsenter stubs: it must look up containerd's
// MainPID, enter /proc/<pid>/ns/mnt and exec kubelet with the flag-only
// settings as separate arguments; with containerd down it must fail and
// say why.
func TestKubeletJoinsContainerdNamespace(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("SKIPPED LOUDLY: no sh to run the kubelet unit's wrapper")
	}
	b, err := Render(seedPlan())
	if err != nil {
		t.Fatal(err)
	}
	var unit []byte
	for _, f := range b.Files {
		if f.Path == unitPath(kubeletUnit("node1")) {
			unit = f.Content
		}
	}
	script := systemdShellScript(t, unit)

	bin := t.TempDir()
	stub := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stub("systemctl", `[ "$*" = "show --property=MainPID --value containerd-node1.service" ] || exit 9; echo "$PID"`+"\n")
	stub("nsenter", `for a in "$@"; do echo "[$a]"; done`+"\n")
	run := func(pid string) (string, error) {
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "PID=" + pid}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run("4242")
	if err != nil {
		t.Fatalf("wrapper failed: %v\n%s", err, out)
	}
	want := "[--mount=/proc/4242/ns/mnt]\n[--]\n[/usr/bin/kubelet]\n" +
		"[--config=/etc/numa-partition/kubelet-node1.yaml]\n[--kubeconfig=/etc/kubernetes/kubelet-node1.conf]\n" +
		"[--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet-node1.conf]\n[--cert-dir=/var/lib/kubelet-node1/pki]\n" +
		"[--root-dir=/var/lib/kubelet]\n[--hostname-override=seed-node1]\n" +
		"[--node-labels=numa-partition.io/partition=node1,numa-type=blue]\n"
	if out != want {
		t.Errorf("nsenter got\n%s\nwant\n%s", out, want)
	}

	out, err = run("0")
	if err == nil || !strings.Contains(out, "containerd-node1.service is not running") {
		t.Errorf("containerd down: want a failure that says so, got %v: %s", err, out)
	}
}
