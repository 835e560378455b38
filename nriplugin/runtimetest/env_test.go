package runtimetest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/numa-partition/numa-partition/nriplugin"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
)

// RealbinEnv names the folder of test/realbin/build.sh's binaries.
const RealbinEnv = "NUMA_PARTITION_REALBIN"

// logsEnv, when set, shows containerd's and the allocator's logs after
// every test (they are shown after a failure anyway).
const logsEnv = "NUMA_PARTITION_RUNTIMETEST_LOGS"

const (
	runcPath      = "/usr/sbin/runc"
	pauseImage    = "e2e.local/pause:1"
	workloadImage = "e2e.local/workload:1"
	gi            = int64(1) << 30
	mi            = int64(1) << 20
	// The allocator's view of each NUMA node's memory (its config, not the
	// machine's: the tests never use that much): 4Gi, 1Gi of node 0's
	// reserved, so no node holds 5Gi.
	nodeMemory   = 4 * gi
	reservedMemo = 1 * gi
)

// machine is what the tests place on: the CPUs and memory nodes this
// process may use, by physical core.
type machine struct {
	cpus    nriplugin.CPUTopology
	nodes   []int // with pod CPUs, ascending
	threads int   // CPUs per core (the most any core has)
	all     bitmask.CPUSet
	first   bitmask.CPUSet  // the core an exclusive container gets first
	mems    bitmask.NodeSet // this process's memory nodes: an unpinned container's
}

// requirements skips the test, loudly, unless this machine can run a
// real containerd; it returns the folder of its binaries.
func requirements(t *testing.T) (realbin string, m machine) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: the NRI plugin's tests against a real containerd need root (containerd, runc, cgroups); run as root (CI does)")
	}
	realbin = os.Getenv(RealbinEnv)
	if realbin == "" {
		t.Skip("SKIPPED LOUDLY: " + RealbinEnv + " is not set, so the NRI plugin was NOT tested against a real containerd; " +
			"build the binaries with test/realbin/build.sh (10-15 min cold) and set " + RealbinEnv + " to the folder it prints " +
			"(`make test` does when .cache/bin/<key>/ exists; .ci/run builds it first)")
	}
	for _, b := range []string{"containerd", "containerd-shim-runc-v2", "ctr"} {
		if fi, err := os.Stat(filepath.Join(realbin, b)); err != nil || fi.Mode()&0o111 == 0 {
			t.Skipf("SKIPPED LOUDLY: %s=%s has no executable %s (run test/realbin/build.sh and use the folder it prints)", RealbinEnv, realbin, b)
		}
	}
	if _, err := os.Stat(runcPath); err != nil {
		t.Skipf("SKIPPED LOUDLY: no runc at %s, so the NRI plugin was NOT tested against a real containerd; apt-get install runc (.ci/run does)", runcPath)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("SKIPPED LOUDLY: no go command to build the test images (test/images/build.sh)")
	}
	m = discoverMachine(t)
	if len(m.cpus.Cores) < 2 {
		t.Skipf("SKIPPED LOUDLY: the tests need 2 physical cores (one exclusive, one shared); this process may use %s", m.all)
	}
	return realbin, m
}

// discoverMachine reads the CPU topology from /sys, restricted to the
// CPUs and memory nodes this process may use.
func discoverMachine(t *testing.T) machine {
	t.Helper()
	topo, err := numa.NewFS("/sys").Discover()
	require.NoError(t, err, "discovering the machine's topology")
	var affinity unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &affinity))
	status, err := procStatus(os.Getpid())
	require.NoError(t, err)
	mems, err := bitmask.ParseNodeList(status.mems)
	require.NoError(t, err)
	m := machine{mems: mems}
	for _, s := range topo.Sockets {
		for _, c := range s.Cores {
			var cpus bitmask.CPUSet
			for _, id := range c.CPUs.IDs() {
				if affinity.IsSet(id) {
					cpus = cpus.Union(bitmask.NewCPUSet(id))
				}
			}
			if cpus.IsEmpty() || c.Node < 0 || !mems.Has(c.Node) {
				continue
			}
			m.cpus.Cores = append(m.cpus.Cores, nriplugin.Core{Node: c.Node, CPUs: cpus})
			m.all = m.all.Union(cpus)
			m.threads = max(m.threads, cpus.Len())
		}
	}
	seen := map[int]bool{}
	for _, c := range m.cpus.Cores {
		if !seen[c.Node] {
			seen[c.Node] = true
			m.nodes = append(m.nodes, c.Node)
		}
	}
	sort.Ints(m.nodes)
	m.cpus.Distances = map[int]map[int]int{}
	for _, a := range m.nodes {
		m.cpus.Distances[a] = map[int]int{}
		for _, b := range m.nodes {
			if d, ok := topo.Distance(a, b); ok {
				m.cpus.Distances[a][b] = d
			}
		}
	}
	// The plugin hands out whole cores lowest node and core first.
	for _, c := range m.cpus.Cores {
		if c.Node == m.nodes[0] && (m.first.IsEmpty() || c.CPUs.IDs()[0] < m.first.IDs()[0]) {
			m.first = c.CPUs
		}
	}
	return m
}

// config is the allocator's configuration for the machine's nodes.
func (m machine) config(policy string) allocator.Config {
	cfg := allocator.Config{Policy: policy, Scope: "container", Distances: m.cpus.Distances}
	for i, id := range m.nodes {
		n := allocator.NodeResources{ID: id, Memory: uint64(nodeMemory), Reserved: map[allocator.ResourceName]uint64{}}
		if i == 0 {
			n.Reserved[allocator.ResourceMemory] = uint64(reservedMemo) // the Static policy needs some
		}
		cfg.Nodes = append(cfg.Nodes, n)
	}
	return cfg
}

// images builds the e2e's pause and workload images once per test binary.
var images struct {
	once sync.Once
	dir  string
	err  error
}

func buildImages(t *testing.T) string {
	t.Helper()
	images.once.Do(func() {
		dir, err := os.MkdirTemp("", "nrirt-images-")
		if err != nil {
			images.err = err
			return
		}
		images.dir = dir
		out, err := exec.Command(filepath.Join(repoRoot(t), "test/images/build.sh"), dir).CombinedOutput()
		if err != nil {
			images.err = fmt.Errorf("test/images/build.sh: %w: %s", err, out)
		}
	})
	require.NoError(t, images.err)
	return images.dir
}

func repoRoot(t *testing.T) string {
	wd, err := os.Getwd()
	require.NoError(t, err)
	return filepath.Join(wd, "../..")
}

// env is one containerd of the test's own, with the allocator plugged in.
type env struct {
	t          *testing.T
	m          machine
	realbin    string
	dir        string // everything of this containerd, short (socket paths)
	cgroupRoot string // the pods' cgroups are under it, in every hierarchy
	logs       string

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
func newEnv(t *testing.T) *env {
	t.Helper()
	realbin, m := requirements(t)
	imagesDir := buildImages(t)
	dir, err := os.MkdirTemp("/tmp", "nrirt-")
	require.NoError(t, err)
	e := &env{t: t, m: m, realbin: realbin, dir: dir,
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
  plugin_path = %[7]q
  plugin_config_path = %[8]q

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
		"linux/"+runtime.GOARCH, pauseImage, d+"/cni/bin", d+"/cni/net.d", runcPath, d+"/state/runc")
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

func tail(t *testing.T, path string, n int) {
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

// --- the allocator, in a process of its own

type allocatorProc struct {
	e      *env
	cmd    *exec.Cmd
	log    string
	synced chan struct{} // a value per synchronization
	exited chan struct{}
	client daemon.Client
}

// startAllocator runs the allocator daemon with its NRI plugin on e's
// containerd, on e's state directory (the same after a restart), and
// waits for its first synchronization.
func (e *env) startAllocator(mode, policy string) *allocatorProc {
	e.t.Helper()
	spec := allocatorSpec{Mode: mode, Config: e.m.config(policy), CPUs: e.m.cpus,
		Socket: filepath.Join(e.dir, "allocator.sock"), StateDir: filepath.Join(e.dir, "allocator-state"), NRISocket: e.nriSocket()}
	raw, err := json.Marshal(spec)
	require.NoError(e.t, err)
	exe, err := os.Executable()
	require.NoError(e.t, err)
	a := &allocatorProc{e: e, log: filepath.Join(e.dir, fmt.Sprintf("allocator-%d.log", e.seq.Add(1))),
		synced: make(chan struct{}, 16), exited: make(chan struct{}), client: daemon.Client{Socket: spec.Socket}}
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

// --- pods and containers, as kubelet makes them

// pod is a running pod sandbox.
type pod struct {
	id, uid, name, namespace string
	config                   *cri.PodSandboxConfig
}

// QoS classes as kubelet's cgroup parent names them (cgroupfs driver).
const (
	guaranteed = ""
	burstable  = "burstable"
	besteffort = "besteffort"
)

// runPod runs a pod sandbox on the host's network, in the cgroup kubelet
// (cgroupfs driver) gives a pod of its QoS class, under e.cgroupRoot.
func (e *env) runPod(name, qos string) *pod {
	e.t.Helper()
	n := e.seq.Add(1)
	p := &pod{uid: fmt.Sprintf("7e57%04d-0000-4000-8000-%012d", n, os.Getpid()), name: name, namespace: "rt"}
	parent := e.cgroupRoot + "/kubepods"
	if qos != guaranteed {
		parent += "/" + qos
	}
	parent += "/pod" + p.uid
	ns := &cri.NamespaceOption{Network: cri.NamespaceMode_NODE, Pid: cri.NamespaceMode_CONTAINER, Ipc: cri.NamespaceMode_POD}
	p.config = &cri.PodSandboxConfig{
		Metadata:     &cri.PodSandboxMetadata{Name: name, Uid: p.uid, Namespace: p.namespace},
		LogDirectory: filepath.Join(e.logs, p.namespace+"_"+name+"_"+p.uid),
		Labels: map[string]string{"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": p.namespace,
			"io.kubernetes.pod.uid": p.uid},
		Annotations: map[string]string{"kubernetes.io/config.source": "api", "kubernetes.io/config.seen": time.Now().UTC().Format(time.RFC3339Nano)},
		Linux: &cri.LinuxPodSandboxConfig{CgroupParent: parent,
			SecurityContext: &cri.LinuxSandboxSecurityContext{NamespaceOptions: ns}},
	}
	require.NoError(e.t, os.MkdirAll(p.config.LogDirectory, 0o755))
	resp, err := e.rt.RunPodSandbox(e.ctx(), &cri.RunPodSandboxRequest{Config: p.config})
	require.NoError(e.t, err, "RunPodSandbox %s", name)
	p.id = resp.GetPodSandboxId()
	return p
}

// removePod stops and removes a pod sandbox, as kubelet does when a pod
// is deleted (after its containers).
func (e *env) removePod(p *pod) {
	e.t.Helper()
	_, err := e.rt.StopPodSandbox(e.ctx(), &cri.StopPodSandboxRequest{PodSandboxId: p.id})
	require.NoError(e.t, err)
	_, err = e.rt.RemovePodSandbox(e.ctx(), &cri.RemovePodSandboxRequest{PodSandboxId: p.id})
	require.NoError(e.t, err)
}

// resources are a container's requests and limits (0 = none), and, in
// kubelet mode, the cpuset kubelet's managers chose.
type resources struct {
	cpuRequestMilli, cpuLimitMilli int64
	memoryLimit                    int64
	cpusetCpus, cpusetMems         string
}

// linux is the container's LinuxContainerResources as kubelet computes
// them (kuberuntime's calculateLinuxResources, CFS quota on): cpu.shares
// from the request (the limit when there is no request, at least 2), the
// quota from the limit over a 100 ms period, the memory limit.
func (r resources) linux() *cri.LinuxContainerResources {
	req := r.cpuRequestMilli
	if req == 0 {
		req = r.cpuLimitMilli
	}
	out := &cri.LinuxContainerResources{CpuShares: max(req*1024/1000, 2), MemoryLimitInBytes: r.memoryLimit,
		OomScoreAdj: 1000, CpusetCpus: r.cpusetCpus, CpusetMems: r.cpusetMems}
	if r.cpuLimitMilli > 0 {
		out.CpuPeriod, out.CpuQuota = 100000, r.cpuLimitMilli*100
	}
	if r.cpuRequestMilli > 0 && r.cpuRequestMilli == r.cpuLimitMilli {
		out.OomScoreAdj = -997 // Guaranteed
	}
	return out
}

// ctr is a container of a pod.
type ctr struct {
	id, name string
	pod      *pod
}

// key is the container's allocation in the allocator.
func (c *ctr) key() string { return c.pod.uid + "/" + c.name }

func (e *env) containerConfig(p *pod, name string, r resources) *cri.ContainerConfig {
	ns := &cri.NamespaceOption{Network: cri.NamespaceMode_NODE, Pid: cri.NamespaceMode_CONTAINER, Ipc: cri.NamespaceMode_POD}
	return &cri.ContainerConfig{
		Metadata: &cri.ContainerMetadata{Name: name},
		Image:    &cri.ImageSpec{Image: workloadImage, UserSpecifiedImage: workloadImage},
		Labels: map[string]string{"io.kubernetes.container.name": name, "io.kubernetes.pod.name": p.name,
			"io.kubernetes.pod.namespace": p.namespace, "io.kubernetes.pod.uid": p.uid},
		Annotations: map[string]string{"io.kubernetes.container.restartCount": "0",
			"io.kubernetes.container.terminationMessagePath":   "/dev/termination-log",
			"io.kubernetes.container.terminationMessagePolicy": "File", "io.kubernetes.pod.terminationGracePeriod": "30"},
		LogPath: name + "/0.log",
		Linux: &cri.LinuxContainerConfig{Resources: r.linux(),
			SecurityContext: &cri.LinuxContainerSecurityContext{NamespaceOptions: ns}},
	}
}

// create creates a container (CRI CreateContainer: the NRI plugin's
// CreateContainer decides and adjusts).
func (e *env) create(p *pod, name string, r resources) (*ctr, error) {
	resp, err := e.rt.CreateContainer(e.ctx(), &cri.CreateContainerRequest{PodSandboxId: p.id,
		Config: e.containerConfig(p, name, r), SandboxConfig: p.config})
	if err != nil {
		return nil, err
	}
	return &ctr{id: resp.GetContainerId(), name: name, pod: p}, nil
}

// run creates and starts a container, and waits for the workload's line
// (it has read its cpuset).
func (e *env) run(p *pod, name string, r resources) *ctr {
	e.t.Helper()
	c, err := e.create(p, name, r)
	require.NoError(e.t, err, "CreateContainer %s of pod %s", name, p.name)
	_, err = e.rt.StartContainer(e.ctx(), &cri.StartContainerRequest{ContainerId: c.id})
	require.NoError(e.t, err, "StartContainer %s of pod %s", name, p.name)
	e.waitFor("the workload of "+name+" printing its cpuset", 10*time.Second, func() (bool, string) {
		line, err := e.workloadLine(c)
		return err == nil && line != "", fmt.Sprint(err)
	})
	return c
}

// stop and remove a container, as kubelet does.
func (e *env) stop(c *ctr) {
	e.t.Helper()
	_, err := e.rt.StopContainer(e.ctx(), &cri.StopContainerRequest{ContainerId: c.id, Timeout: 10})
	require.NoError(e.t, err)
}

func (e *env) remove(c *ctr) {
	e.t.Helper()
	_, err := e.rt.RemoveContainer(e.ctx(), &cri.RemoveContainerRequest{ContainerId: c.id})
	require.NoError(e.t, err)
}

// workloadLine is what the workload printed when it started: the cpuset
// the kernel gave it ("cpus=0 mems=0").
func (e *env) workloadLine(c *ctr) (string, error) {
	data, err := os.ReadFile(filepath.Join(c.pod.config.LogDirectory, c.name, "0.log"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		// CRI log format: TIME STREAM TAG MESSAGE.
		if f := strings.SplitN(line, " ", 4); len(f) == 4 && f[1] == "stdout" {
			return f[3], nil
		}
	}
	return "", nil
}

// containerInfo is the verbose part of CRI ContainerStatus (containerd).
type containerInfo struct {
	Pid         int `json:"pid"`
	RuntimeSpec struct {
		Linux struct {
			Resources struct {
				CPU *struct {
					Cpus string `json:"cpus"`
					Mems string `json:"mems"`
				} `json:"cpu"`
			} `json:"resources"`
		} `json:"linux"`
	} `json:"runtimeSpec"`
}

func (e *env) info(c *ctr) containerInfo {
	e.t.Helper()
	st, err := e.rt.ContainerStatus(e.ctx(), &cri.ContainerStatusRequest{ContainerId: c.id, Verbose: true})
	require.NoError(e.t, err)
	var info containerInfo
	require.NoError(e.t, json.Unmarshal([]byte(st.GetInfo()["info"]), &info), "ContainerStatus info of %s", c.name)
	require.NotZero(e.t, info.Pid, "container %s has no pid", c.name)
	return info
}

// specCpuset is the cpuset in the container's OCI spec: what containerd
// created it with after the NRI adjustment.
func (e *env) specCpuset(c *ctr) (cpus, mems string) {
	info := e.info(c)
	if r := info.RuntimeSpec.Linux.Resources.CPU; r != nil {
		return r.Cpus, r.Mems
	}
	return "", ""
}

// cpuset is what the container's process really has: its
// Cpus_allowed_list and Mems_allowed_list, and its cpuset cgroup's
// cpuset.cpus and cpuset.mems.
type cpuset struct {
	procCPUs, cgroupCPUs bitmask.CPUSet
	procMems, cgroupMems bitmask.NodeSet
}

func (s cpuset) String() string {
	return fmt.Sprintf("Cpus_allowed_list=%s cpuset.cpus=%s Mems_allowed_list=%s cpuset.mems=%s",
		s.procCPUs, s.cgroupCPUs, s.procMems, s.cgroupMems)
}

func (e *env) cpuset(c *ctr) (cpuset, error) {
	pid := e.info(c).Pid
	var s cpuset
	st, err := procStatus(pid)
	if err != nil {
		return s, err
	}
	if s.procCPUs, err = bitmask.ParseCPUList(st.cpus); err != nil {
		return s, err
	}
	if s.procMems, err = bitmask.ParseNodeList(st.mems); err != nil {
		return s, err
	}
	dir, err := cpusetCgroup(pid)
	if err != nil {
		return s, err
	}
	for file, parse := range map[string]func(string) error{
		"cpuset.cpus": func(v string) (err error) { s.cgroupCPUs, err = bitmask.ParseCPUList(v); return err },
		"cpuset.mems": func(v string) (err error) { s.cgroupMems, err = bitmask.ParseNodeList(v); return err },
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return s, err
		}
		if err := parse(strings.TrimSpace(string(data))); err != nil {
			return s, fmt.Errorf("%s/%s: %w", dir, file, err)
		}
	}
	return s, nil
}

// waitCPUs waits until the container's process runs on want, by both its
// Cpus_allowed_list and its cgroup, and returns what it has.
func (e *env) waitCPUs(c *ctr, want bitmask.CPUSet, why string) cpuset {
	e.t.Helper()
	var s cpuset
	e.waitFor(fmt.Sprintf("container %s on CPUs %s (%s)", c.name, want, why), 10*time.Second, func() (bool, string) {
		var err error
		if s, err = e.cpuset(c); err != nil {
			return false, err.Error()
		}
		return s.procCPUs.Equal(want) && s.cgroupCPUs.Equal(want), s.String()
	})
	return s
}

type status struct{ cpus, mems, state string }

func procStatus(pid int) (status, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return status{}, err
	}
	var s status
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "Cpus_allowed_list":
			s.cpus = strings.TrimSpace(v)
		case "Mems_allowed_list":
			s.mems = strings.TrimSpace(v)
		case "State":
			s.state, _, _ = strings.Cut(strings.TrimSpace(v), " ")
		}
	}
	if s.cpus == "" || s.mems == "" {
		return s, fmt.Errorf("/proc/%d/status has no Cpus_allowed_list or Mems_allowed_list", pid)
	}
	return s, nil
}

func procState(pid int) (string, error) {
	s, err := procStatus(pid)
	return s.state, err
}

// cpusetCgroup is the directory of a process's cpuset cgroup: the v1
// cpuset hierarchy's, else the unified one's.
func cpusetCgroup(pid int) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	mountOf := func(v1 bool) string {
		for _, line := range strings.Split(string(mounts), "\n") {
			f := strings.Fields(line)
			_, after, ok := strings.Cut(line, " - ")
			if !ok || len(f) < 5 {
				continue
			}
			a := strings.Fields(after)
			if v1 && len(a) >= 3 && a[0] == "cgroup" && hasOpt(a[2], "cpuset") {
				return unescapeMount(f[4])
			}
			if !v1 && len(a) >= 1 && a[0] == "cgroup2" {
				return unescapeMount(f[4])
			}
		}
		return ""
	}
	var unified string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if hasOpt(parts[1], "cpuset") {
			if mp := mountOf(true); mp != "" {
				return filepath.Join(mp, parts[2]), nil
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
	}
	if mp := mountOf(false); mp != "" && unified != "" {
		return filepath.Join(mp, unified), nil
	}
	return "", fmt.Errorf("process %d has no cpuset cgroup: %s", pid, data)
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}
