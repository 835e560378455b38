package runtimetest

// A containerd 2 of the test's own: its config, start, stop and a teardown that leaves nothing behind.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// env is one containerd of the test's own, with the allocator plugged in.
type env struct {
	t          testing.TB
	m          machine
	realbin    string
	dir        string // everything of this containerd, short (socket paths)
	cgroupRoot string // the pods' cgroups are under it, in every hierarchy
	logs       string
	// requirePlugin makes containerd refuse containers while the
	// allocator's plugin is not connected, as the containerd of a
	// partition in nri mode does (templates/containerd.toml.tmpl).
	requirePlugin bool

	containerd *exec.Cmd
	exited     chan struct{}
	conn       *grpc.ClientConn
	rt         cri.RuntimeServiceClient
	img        cri.ImageServiceClient

	alloc  *allocatorProc
	seq    atomic.Int64
	base   context.Context // bounds every call of the test
	cancel context.CancelFunc
}

var cgroupSeq atomic.Int64

// newEnv starts containerd and imports the images. Everything it creates
// is undone when the test ends, whatever happened.
func newEnv(t testing.TB) *env {
	t.Helper()
	return startEnv(t, false)
}

// newEnvRequiringPlugin is newEnv with a containerd that creates no
// container while the allocator's plugin is away (nri mode's).
func newEnvRequiringPlugin(t testing.TB) *env {
	t.Helper()
	return startEnv(t, true)
}

func startEnv(t testing.TB, requirePlugin bool) *env {
	t.Helper()
	realbin, m := requirements(t)
	imagesDir := buildImages(t)
	dir, err := os.MkdirTemp("/tmp", "nrirt-")
	require.NoError(t, err)
	e := &env{t: t, m: m, realbin: realbin, dir: dir, requirePlugin: requirePlugin,
		cgroupRoot: fmt.Sprintf("/nrirt-%d-%d", os.Getpid(), cgroupSeq.Add(1))}
	e.base, e.cancel = context.WithTimeout(context.Background(), 3*time.Minute)
	e.logs = filepath.Join(dir, "logs")
	require.NoError(t, os.MkdirAll(e.logs, 0o755))
	t.Cleanup(e.teardown)

	e.conn, err = grpc.NewClient("unix://"+e.socket(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	e.rt, e.img = cri.NewRuntimeServiceClient(e.conn), cri.NewImageServiceClient(e.conn)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "containerd.toml"), []byte(e.containerdConfig()), 0o644))
	e.startContainerd()
	for _, name := range []string{"pause", "workload"} {
		out, err := exec.Command(filepath.Join(realbin, "ctr"), "--address", e.socket(), "-n", "k8s.io",
			"images", "import", filepath.Join(imagesDir, name+".tar")).CombinedOutput()
		require.NoError(t, err, "ctr images import %s.tar: %s", name, out)
	}
	for _, ref := range []string{pauseImage, workloadImage} {
		e.waitFor("CRI sees image "+ref, 10*time.Second, func() (bool, string) {
			st, err := e.img.ImageStatus(e.ctx(), &cri.ImageStatusRequest{Image: &cri.ImageSpec{Image: ref}})
			if err != nil {
				return false, err.Error()
			}
			return st.GetImage() != nil, "not listed yet"
		})
	}
	return e
}

// startContainerd starts containerd (again) and waits until its CRI
// runtime is ready.
func (e *env) startContainerd() {
	e.t.Helper()
	logf, err := os.OpenFile(filepath.Join(e.dir, "containerd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(e.t, err)
	defer logf.Close()
	cmd := exec.Command(filepath.Join(e.realbin, "containerd"), "--config", filepath.Join(e.dir, "containerd.toml"), "--log-level", "debug")
	// The shim is found on PATH; runc by its absolute path (config).
	cmd.Env = append(os.Environ(), "PATH="+e.realbin+":/usr/sbin:/usr/bin:/sbin:/bin")
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(e.t, cmd.Start())
	exited := make(chan struct{})
	e.containerd, e.exited = cmd, exited
	go func() { _ = cmd.Wait(); close(exited) }()
	e.waitFor("containerd's CRI runtime ready", 30*time.Second, func() (bool, string) {
		st, err := e.rt.Status(e.ctx(), &cri.StatusRequest{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range st.GetStatus().GetConditions() {
			if c.GetType() == cri.RuntimeReady {
				return c.GetStatus(), c.GetReason() + " " + c.GetMessage()
			}
		}
		return false, "no RuntimeReady condition"
	})
}

// stopContainerd stops containerd with SIGTERM, as systemd does; its
// shims, and so the containers, keep running.
func (e *env) stopContainerd() {
	select {
	case <-e.exited:
		return
	default:
	}
	_ = e.containerd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(15 * time.Second):
		e.t.Logf("containerd ignored SIGTERM for 15 s, killing it")
		_ = e.containerd.Process.Kill()
		<-e.exited
	}
}

func (e *env) socket() string    { return filepath.Join(e.dir, "containerd.sock") }
func (e *env) nriSocket() string { return filepath.Join(e.dir, "nri.sock") }

func (e *env) ctx() context.Context { return e.base }

// containerdConfig is a partition's containerd config (what
// templates/containerd.toml.tmpl renders) made to stand alone in e.dir:
// its own root, state, sockets and NRI socket, no NRI plugins of the
// host's, runc with cgroupfs (this host may have no systemd), the native
// snapshotter (works on any file system).
func (e *env) containerdConfig() string {
	d := e.dir
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.nri.v1.nri"]
  disable = false
  socket_path = %[6]q
  # A partition's (slices/render: nriRequestTimeout).
  plugin_request_timeout = "15s"
  plugin_path = %[7]q
  plugin_config_path = %[8]q
%[15]s
[plugins."io.containerd.transfer.v1.local"]
  [[plugins."io.containerd.transfer.v1.local".unpack_config]]
    platform = %[9]q
    snapshotter = "native"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "native"

[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = %[10]q

[plugins."io.containerd.cri.v1.runtime"]
  # No lower oom_score_adj than containerd's own (pods ask -998): a
  # process without CAP_SYS_RESOURCE (a VM's sandbox) may not lower it.
  restrict_oom_score_adj = true

[plugins."io.containerd.cri.v1.runtime".cni]
  bin_dirs = [%[11]q]
  conf_dir = %[12]q

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
  BinaryName = %[13]q
  SystemdCgroup = false
  Root = %[14]q
`, d+"/root", d+"/state", e.socket(), e.socket()+".ttrpc", d+"/opt", e.nriSocket(), d+"/nri/plugins", d+"/nri/conf.d",
		"linux/"+runtime.GOARCH, pauseImage, d+"/cni/bin", d+"/cni/net.d", runcPath, d+"/state/runc", e.validatorConfig())
}

// validatorConfig is the NRI validator block a partition in nri mode
// renders, or nothing.
func (e *env) validatorConfig() string {
	if !e.requirePlugin {
		return ""
	}
	return fmt.Sprintf(`
[plugins."io.containerd.nri.v1.nri".default_validator]
  enable = true
  required_plugins = [%q]
`, pluginName)
}

// waitFor polls cond until it holds, failing the test after timeout with
// the last thing cond said.
func (e *env) waitFor(what string, timeout time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		select {
		case <-e.exited:
			e.t.Fatalf("waiting for %s: containerd exited (%v); last: %s", what, e.containerd.ProcessState, last)
		default:
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("waiting for %s: not after %s; last: %s", what, timeout, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// teardown undoes everything, also after a failure: the allocator, every
// pod and container through CRI, containerd, then whatever is left of
// them (processes in the pods' cgroups, shims, mounts, cgroups, files).
func (e *env) teardown() {
	t := e.t
	if e.alloc != nil {
		e.alloc.stop()
	}
	if e.rt != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if l, err := e.rt.ListContainers(ctx, &cri.ListContainersRequest{}); err == nil {
			for _, c := range l.GetContainers() {
				_, _ = e.rt.StopContainer(ctx, &cri.StopContainerRequest{ContainerId: c.GetId(), Timeout: 5})
				if _, err := e.rt.RemoveContainer(ctx, &cri.RemoveContainerRequest{ContainerId: c.GetId()}); err != nil {
					t.Logf("teardown: removing container %s: %v", c.GetId(), err)
				}
			}
		}
		if l, err := e.rt.ListPodSandbox(ctx, &cri.ListPodSandboxRequest{}); err == nil {
			for _, p := range l.GetItems() {
				_, _ = e.rt.StopPodSandbox(ctx, &cri.StopPodSandboxRequest{PodSandboxId: p.GetId()})
				if _, err := e.rt.RemovePodSandbox(ctx, &cri.RemovePodSandboxRequest{PodSandboxId: p.GetId()}); err != nil {
					t.Logf("teardown: removing pod sandbox %s: %v", p.GetId(), err)
				}
			}
		}
		cancel()
	}
	if e.conn != nil {
		_ = e.conn.Close()
	}
	e.cancel()
	if e.containerd != nil {
		e.stopContainerd()
	}
	if t.Failed() || os.Getenv(logsEnv) != "" {
		e.dumpLogs()
	}
	e.killLeftovers()
	e.removeShimSockets()
	e.unmountAll()
	e.removeCgroups()
	if err := os.RemoveAll(e.dir); err != nil {
		t.Errorf("teardown: %v", err)
	}
}

func (e *env) dumpLogs() {
	for _, name := range []string{"containerd.log"} {
		tail(e.t, filepath.Join(e.dir, name), 60)
	}
	logs, _ := filepath.Glob(filepath.Join(e.dir, "allocator-*.log"))
	for _, l := range logs {
		tail(e.t, l, 60)
	}
}

func tail(t testing.TB, path string, n int) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Logf("%s: %v", path, err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	t.Logf("--- last %d lines of %s:\n%s", len(lines), filepath.Base(path), strings.Join(lines, "\n"))
}

// killLeftovers kills what teardown through CRI missed: the processes in
// the pods' cgroups (containers) and the shims of this containerd (their
// command line names its socket, unique to the test).
func (e *env) killLeftovers() {
	pids := map[int]bool{}
	for _, dir := range e.cgroupDirs() {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids[pid] = true
			}
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		cmdline, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if filepath.Base(args[0]) == "containerd-shim-runc-v2" && strings.Contains(string(cmdline), "\x00"+e.socket()+"\x00") {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				pids[pid] = true
			}
		}
	}
	for pid := range pids {
		e.t.Logf("teardown: killing leftover process %d", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pid := range pids {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			if st, err := procState(pid); err != nil || st == "Z" {
				break // a zombie: whoever it was reparented to reaps it
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// removeShimSockets removes the sockets of this containerd's shims that
// killLeftovers killed (a shim removes them when it exits cleanly):
// containerd names them /run/containerd/s/<sha256 of its address,
// namespace, id[, "debug"]>.
func (e *env) removeShimSockets() {
	bundles, _ := filepath.Glob(filepath.Join(e.dir, "state/io.containerd.runtime.v2.task/*/*"))
	for _, b := range bundles {
		ns, id := filepath.Base(filepath.Dir(b)), filepath.Base(b)
		for _, p := range []string{filepath.Join(e.socket(), ns, id), filepath.Join(e.socket(), ns, id, "debug")} {
			sock := fmt.Sprintf("/run/containerd/s/%x", sha256.Sum256([]byte(p)))
			if _, err := os.Stat(sock); err != nil {
				continue
			}
			if c, err := net.Dial("unix", sock); err == nil {
				c.Close()
				e.t.Logf("teardown: shim socket %s is still served; left alone", sock)
				continue
			}
			if err := os.Remove(sock); err != nil {
				e.t.Logf("teardown: %v", err)
			}
		}
	}
}

// unmountAll detaches every mount under e.dir, deepest first.
func (e *env) unmountAll() {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		e.t.Logf("teardown: %v", err)
		return
	}
	var mounts []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if mp == e.dir || strings.HasPrefix(mp, e.dir+"/") {
			mounts = append(mounts, mp)
		}
	}
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, mp := range mounts {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			e.t.Logf("teardown: unmounting %s: %v", mp, err)
		}
	}
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupDirs are the directories of e.cgroupRoot in every cgroup
// hierarchy, deepest first.
func (e *env) cgroupDirs() []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(string(data), "\n") {
		_, after, ok := strings.Cut(line, " - ")
		f := strings.Fields(line)
		if !ok || len(f) < 5 {
			continue
		}
		if fstype := strings.Fields(after); len(fstype) == 0 || (fstype[0] != "cgroup" && fstype[0] != "cgroup2") {
			continue
		}
		root := filepath.Join(unescapeMount(f[4]), e.cgroupRoot)
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	return dirs
}

// removeCgroups removes the pods' cgroups: runc removes a container's own
// but not its pod's, which is kubelet's job.
func (e *env) removeCgroups() {
	for _, dir := range e.cgroupDirs() {
		var err error
		for i := 0; i < 50; i++ { // the kernel frees a cgroup a moment after its last task
			if err = unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) || !errors.Is(err, unix.EBUSY) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil && !errors.Is(err, unix.ENOENT) {
			e.t.Errorf("teardown: removing cgroup %s: %v", dir, err)
		}
	}
}
