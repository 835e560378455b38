package transaction

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// On a real cpuset v1 hierarchy (this CI machine's hybrid layout): joining
// a slice's group keeps the unit's CPUAffinity=, and removing the group
// removes the pods' groups below it first (rmdir of a parent is EBUSY).
// Kernels since 6.2 keep a task's requested affinity across cpuset moves
// themselves, so there the first half would pass without attach's help;
// Debian 12's 6.1 resets it, which the e2e's v1 boot shows.
func TestCpusetV1AttachKeepsAffinityAndRemoveIsDeep(t *testing.T) {
	base := "/sys/fs/cgroup/cpuset"
	if os.Geteuid() != 0 {
		t.Skip("NOT RUN: needs root to write cpuset v1 groups")
	}
	if _, err := os.Stat(filepath.Join(base, "cpuset.cpus")); err != nil {
		t.Skip("NOT RUN: no cpuset v1 hierarchy at " + base)
	}
	if runtime.NumCPU() < 2 {
		t.Skip("NOT RUN: needs 2 CPUs")
	}
	g := cpusetV1{dir: filepath.Join(base, fmt.Sprintf("numa-partition-test-%d", os.Getpid()))}
	t.Cleanup(func() { _ = g.remove() })
	mems, err := os.ReadFile(filepath.Join(base, "cpuset.mems"))
	if err != nil {
		t.Fatal(err)
	}
	firstMem := strings.FieldsFunc(strings.TrimSpace(string(mems)), func(r rune) bool { return r == ',' || r == '-' })[0]
	if err := g.set("0-1", firstMem); err != nil {
		t.Fatal(err)
	}

	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	pid := sleep.Process.Pid
	// Start in a group of CPU 1 only, so that joining g (CPUs 0-1) changes
	// the cpuset and the kernel resets the affinity (it skips the reset
	// when both groups have the same CPUs), then pin it like CPUAffinity=1.
	src := cpusetV1{dir: g.dir + "-src"}
	t.Cleanup(func() { _ = src.remove() })
	if err := src.set("1", firstMem); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	var one unix.CPUSet
	one.Set(1)
	if err := unix.SchedSetaffinity(pid, &one); err != nil {
		t.Fatal(err)
	}
	// The unit's cgroup in the name=systemd hierarchy, under a scratch root.
	root := t.TempDir()
	unitDir := filepath.Join(root, "sys/fs/cgroup/systemd/test.slice/test.service")
	if err := os.MkdirAll(unitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unitDir, "cgroup.procs"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := g.attach(root, "/test.slice/test.service")
	if err != nil || n != 1 {
		t.Fatalf("attach: %d processes, %v", n, err)
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &got); err != nil {
		t.Fatal(err)
	}
	if got.Count() != 1 || !got.IsSet(1) {
		t.Fatalf("after joining the group the affinity is %v CPUs (CPU1 set: %v), want only CPU 1 (the unit's CPUAffinity=)", got.Count(), got.IsSet(1))
	}
	if procs, _ := g.read("cgroup.procs"); !strings.Contains(procs, strconv.Itoa(pid)) {
		t.Fatalf("pid %d is not in %s: %q", pid, g.dir, procs)
	}

	// A pod's group below the slice's, with the process in it.
	pod := cpusetV1{dir: filepath.Join(g.dir, "pod1")}
	if err := pod.set("1", firstMem); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pod.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.remove(); err != nil {
		t.Fatalf("remove with a populated child group: %v", err)
	}
	if _, err := os.Stat(g.dir); !os.IsNotExist(err) {
		t.Fatalf("%s still exists: %v", g.dir, err)
	}
	if err := unix.Kill(pid, 0); err != nil {
		t.Fatalf("the process did not survive the removal of its group: %v", err)
	}
	top, _ := os.ReadFile(filepath.Join(base, "cgroup.procs"))
	if !strings.Contains("\n"+string(top), "\n"+strconv.Itoa(pid)+"\n") {
		t.Fatalf("pid %d was not moved to the parent group", pid)
	}
}
