package runtimetest

// The allocator in a process of its own (the test binary re-executed), so that it can be killed -9.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

// allocatorProc is a running allocator: the test binary re-executed as
// `numa-partition allocator serve` would run it.
type allocatorProc struct {
	e      *env
	cmd    *exec.Cmd
	log    string
	synced chan struct{} // a value per synchronization
	exited chan struct{}
	client daemonapi.Client
}

// startAllocator runs the allocator daemon with its NRI plugin on e's
// containerd, on e's state directory (the same after a restart), and
// waits for its first synchronization. Each option changes the spec
// (the scope, a pod cache, timings).
func (e *env) startAllocator(mode, policy string, options ...func(*allocatorSpec)) *allocatorProc {
	e.t.Helper()
	spec := allocatorSpec{Mode: mode, Config: e.m.config(policy), CPUs: e.m.cpus,
		Socket: filepath.Join(e.dir, "allocator.sock"), StateDir: filepath.Join(e.dir, "allocator-state"), NRISocket: e.nriSocket()}
	for _, o := range options {
		o(&spec)
	}
	raw, err := json.Marshal(spec)
	require.NoError(e.t, err)
	exe, err := os.Executable()
	require.NoError(e.t, err)
	a := &allocatorProc{e: e, log: filepath.Join(e.dir, fmt.Sprintf("allocator-%d.log", e.seq.Add(1))),
		synced: make(chan struct{}, 16), exited: make(chan struct{}), client: daemonapi.Client{Socket: spec.Socket}}
	logf, err := os.Create(a.log)
	require.NoError(e.t, err)
	defer logf.Close()
	a.cmd = exec.Command(exe, "-test.run=^$")
	a.cmd.Env = append(os.Environ(), helperEnv+"="+string(raw))
	a.cmd.Stderr = logf
	out, err := a.cmd.StdoutPipe()
	require.NoError(e.t, err)
	require.NoError(e.t, a.cmd.Start())
	e.alloc = a
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == syncedLine {
				a.synced <- struct{}{}
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = a.cmd.Wait()
		close(a.exited)
	}()
	a.waitSynced()
	return a
}

// waitSynced waits for the allocator's next synchronization with
// containerd.
func (a *allocatorProc) waitSynced() {
	a.e.t.Helper()
	select {
	case <-a.synced:
	case <-a.exited:
		tail(a.e.t, a.log, 40)
		a.e.t.Fatalf("the allocator exited (%v) before synchronizing with containerd", a.cmd.ProcessState)
	case <-time.After(30 * time.Second):
		tail(a.e.t, a.log, 40)
		a.e.t.Fatal("the allocator did not synchronize with containerd in 30 s")
	}
}

// kill9 kills the allocator with SIGKILL, as a crash would.
func (a *allocatorProc) kill9() {
	a.e.t.Helper()
	require.NoError(a.e.t, a.cmd.Process.Signal(syscall.SIGKILL))
	<-a.exited
	require.Equal(a.e.t, "signal: killed", a.cmd.ProcessState.String())
	a.e.alloc = nil
}

// stop ends the allocator with SIGTERM, and fails the test when it does
// not exit 0 (a data race the detector found exits 66).
func (a *allocatorProc) stop() {
	select {
	case <-a.exited:
		return
	default:
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(15 * time.Second):
		a.e.t.Errorf("the allocator ignored SIGTERM for 15 s; killing it")
		_ = a.cmd.Process.Kill()
		<-a.exited
	}
	if !a.cmd.ProcessState.Success() {
		tail(a.e.t, a.log, 40)
		a.e.t.Errorf("the allocator exited %v after SIGTERM", a.cmd.ProcessState)
	}
}

// logText is everything the allocator logged.
func (a *allocatorProc) logText() string {
	data, err := os.ReadFile(a.log)
	require.NoError(a.e.t, err)
	return string(data)
}

// allocations are the allocator's allocations by key (pod uid/container).
func (a *allocatorProc) allocations() map[string]allocator.Allocation {
	a.e.t.Helper()
	resp, err := a.client.Allocations(a.e.ctx())
	require.NoError(a.e.t, err)
	out := map[string]allocator.Allocation{}
	for _, al := range resp.Allocations {
		out[string(al.PodUID)] = al
	}
	return out
}

func keys(m map[string]allocator.Allocation) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// waitAllocations waits until the allocator holds exactly want.
func (a *allocatorProc) waitAllocations(what string, want ...string) map[string]allocator.Allocation {
	a.e.t.Helper()
	sort.Strings(want)
	var got map[string]allocator.Allocation
	a.e.waitFor(what, 10*time.Second, func() (bool, string) {
		got = a.allocations()
		return strings.Join(keys(got), " ") == strings.Join(want, " "), fmt.Sprintf("allocations %v, want %v", keys(got), want)
	})
	return got
}
