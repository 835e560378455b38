package sandbox

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// checkNodeDirs: in its mount namespace (which containerd, kubelet and
// the containers share) each partition sees its own directory at every
// node dir: what a CNI add-on writes to /run/flannel there lands in
// /run/flannel-<partition> on the host, and nowhere else.
func checkNodeDirs(t *testing.T, s *Sandbox, partitions []string) {
	t.Helper()
	for _, p := range partitions {
		// The PID is the sandbox's: enter its namespace from inside.
		pid := strconv.Itoa(mainPID(t, s, "mountns-"+p+".service"))
		sandboxExec(t, s, "nsenter", "-t", pid, "-m", "sh", "-c", "echo FLANNEL_SUBNET="+p+" > /run/flannel/subnet.env")
		b, err := os.ReadFile(s.Path("run/flannel-" + p + "/subnet.env"))
		if err != nil || string(b) != "FLANNEL_SUBNET="+p+"\n" {
			t.Fatalf("partition %s wrote /run/flannel/subnet.env in its namespace; the host's /run/flannel-%s/subnet.env has %q, %v", p, p, b, err)
		}
		if _, err := os.Stat(s.Path("run/flannel/subnet.env")); !os.IsNotExist(err) {
			t.Fatalf("partition %s's /run/flannel/subnet.env reached the host's /run/flannel: %v", p, err)
		}
		for _, d := range []string{"etc/cni/net.d", "var/lib/cni", "var/log/pods", "var/log/containers"} {
			if fi, err := os.Stat(s.Path(d + "-" + p)); err != nil || !fi.IsDir() {
				t.Fatalf("node dir source /%s-%s: %v", d, p, err)
			}
		}
	}
}

// checkDaemonCrashes (#24 item 17): a partition survives the SIGKILL of
// any of its daemons. Before the fix kubelet was BindsTo= its containerd:
// at containerd's crash systemd stopped kubelet, restarted containerd
// and never started kubelet again, so the Node stayed NotReady.
func checkDaemonCrashes(t *testing.T, s *Sandbox, p string, healthy func() bool) {
	t.Helper()
	units := []string{"containerd-" + p + ".service", "numa-allocator@" + p + ".service", "kubelet-" + p + ".service"}
	holder := "mountns-" + p + ".service"
	// What containerd does for every pod: a mount inside the partition's
	// mount namespace (a pod's network namespace at /run/netns/cni-*). A
	// containerd that came back without it re-created every pod.
	mark := "/run/np-sandbox-mark-" + p
	sandboxExec(t, s, "nsenter", "-t", strconv.Itoa(mainPID(t, s, holder)), "-m", "sh", "-c",
		"mkdir -p "+mark+" && mount -t tmpfs -o size=1m np-mark "+mark)
	holderPID := mainPID(t, s, holder)
	for _, victim := range units {
		before := map[string]int{}
		for _, u := range units {
			before[u] = mainPID(t, s, u)
		}
		t0 := time.Now()
		sandboxExec(t, s, "kill", "-KILL", strconv.Itoa(before[victim]))
		// systemd waits RestartSec= (containerd 5 s, kubelet 10 s) before
		// it restarts; a minute leaves room on a loaded machine.
		deadline := t0.Add(time.Minute)
		for {
			up := true
			for _, u := range units {
				if unitState(t, s, u) != "active" {
					up = false
				}
			}
			if up && mainPID(t, s, victim) != before[victim] && healthy() {
				break
			}
			if time.Now().After(deadline) {
				var states []string
				for _, u := range units {
					states = append(states, u+"="+unitState(t, s, u))
				}
				t.Fatalf("SIGKILL of %s: after %s not everything is back: %s", victim, time.Minute, strings.Join(states, " "))
			}
			time.Sleep(200 * time.Millisecond)
		}
		// kubelet restarts with its containerd (PartOf=), never left down.
		if victim == units[0] && mainPID(t, s, units[2]) == before[units[2]] {
			t.Fatalf("containerd-%s restarted but kubelet-%s did not", p, p)
		}
		// Both run, again, in the holder's namespace, which outlived the
		// kill, with the mount made before it.
		if pid := mainPID(t, s, holder); pid != holderPID {
			t.Fatalf("SIGKILL of %s restarted %s (MainPID %d, was %d): the partition got a new mount namespace", victim, holder, pid, holderPID)
		}
		want := strings.TrimSpace(sandboxExec(t, s, "readlink", "/proc/"+strconv.Itoa(holderPID)+"/ns/mnt"))
		for _, u := range []string{units[0], units[2]} {
			if got := strings.TrimSpace(sandboxExec(t, s, "readlink", "/proc/"+strconv.Itoa(mainPID(t, s, u))+"/ns/mnt")); got != want {
				t.Fatalf("after the SIGKILL of %s, %s runs in mount namespace %s, not the partition's %s", victim, u, got, want)
			}
		}
		mounts := sandboxExec(t, s, "cat", "/proc/"+strconv.Itoa(mainPID(t, s, units[0]))+"/mountinfo")
		if !strings.Contains(mounts, " "+mark+" ") {
			t.Fatalf("after the SIGKILL of %s, containerd-%s no longer sees the mount at %s made in the partition's namespace (its pods' network namespaces would be gone)", victim, p, mark)
		}
		t.Logf("SIGKILL of %s: every daemon of %s active and healthy again after %s", victim, p, time.Since(t0).Round(100*time.Millisecond))
	}
}

func mainPID(t *testing.T, s *Sandbox, unit string) int {
	t.Helper()
	v := systemctlShow(t, s, unit, "MainPID")
	pid, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("MainPID of %s: %q", unit, v)
	}
	return pid
}

func unitState(t *testing.T, s *Sandbox, unit string) string {
	t.Helper()
	return systemctlShow(t, s, unit, "ActiveState")
}

func systemctlShow(t *testing.T, s *Sandbox, unit, prop string) string {
	t.Helper()
	return strings.TrimSpace(sandboxExec(t, s, "systemctl", "show", "-p", prop, "--value", unit))
}

// sandboxExec runs a command in the sandbox's namespaces; failing is fatal.
func sandboxExec(t *testing.T, s *Sandbox, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := s.Exec(ctx, args...)
	if err != nil {
		t.Fatalf("in the sandbox, %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
