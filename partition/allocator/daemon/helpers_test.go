package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

// daemonBinary is the real numa-partition binary, built once by TestMain.
var daemonBinary string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "allocd-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// World-readable, so the unprivileged-peer tests can exec it as nobody.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	daemonBinary = filepath.Join(dir, "numa-partition")
	args := []string{"build", "-o", daemonBinary}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/numa-partition/numa-partition/cmd/numa-partition")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the daemon binary:", err)
		return 1
	}
	return m.Run()
}

const (
	gib = uint64(1) << 30
	mib = uint64(1) << 20
)

// testConfig is a two-node partition: 16 GiB per node (1 GiB reserved for
// the system on node 0) and 2 GiB of 2 MiB pages per node, single-numa-node
// like a telco kubelet.
func testConfig() allocator.Config {
	node := func(id int, reserved uint64) allocator.NodeResources {
		return allocator.NodeResources{
			ID: id, Memory: 16 * gib,
			Hugepages: map[uint64]uint64{2 * mib: 2 * gib},
			Reserved:  map[allocator.ResourceName]uint64{allocator.ResourceMemory: reserved},
		}
	}
	return allocator.Config{
		Nodes:     []allocator.NodeResources{node(0, gib), node(1, 0)},
		Distances: map[int]map[int]int{0: {0: 10, 1: 21}, 1: {0: 21, 1: 10}},
		Policy:    "single-numa-node",
		Scope:     "container",
	}
}

func writeConfig(t testing.TB, dir string, cfg allocator.Config) string {
	t.Helper()
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "allocator.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer collects a daemon's stderr.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// daemon is one running `numa-partition allocator serve`.
type process struct {
	t       testing.TB
	cmd     *exec.Cmd
	socket  string
	stderr  *syncBuffer
	notify  chan string // sd_notify datagrams, as systemd would receive them
	exited  chan error
	Client  daemonapi.Client
	stopped bool
}

type daemonSpec struct {
	dir       string // state dir; socket and notify socket live here too
	socketDir string // where the socket goes instead, when set
	partition string
	config    string   // --allocator-config file; empty: plan from global flags
	global    []string // global flags (--sysfs, --config)
	extra     []string
	env       []string
}

// startProcess starts the daemon without waiting for it.
func startProcess(t testing.TB, s daemonSpec) *process {
	t.Helper()
	if s.partition == "" {
		s.partition = "test"
	}
	socketDir := s.dir
	if s.socketDir != "" {
		socketDir = s.socketDir
	}
	socket := filepath.Join(socketDir, s.partition+".sock")
	notifyPath := filepath.Join(s.dir, fmt.Sprintf("notify-%d.sock", rand.Int()))
	nl, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	d := &process{t: t, socket: socket, stderr: &syncBuffer{}, notify: make(chan string, 1024), exited: make(chan error, 1), Client: daemonapi.NewClient(socket)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := nl.Read(buf)
			if err != nil {
				return
			}
			for _, line := range strings.Split(string(buf[:n]), "\n") {
				select {
				case d.notify <- line:
				default:
				}
			}
		}
	}()
	args := append(append([]string{"--log-level", "debug"}, s.global...), "allocator", "serve",
		"--partition", s.partition, "--socket", socket, "--state-dir", s.dir)
	if s.config != "" {
		args = append(args, "--allocator-config", s.config)
	}
	args = append(args, s.extra...)
	d.cmd = exec.Command(daemonBinary, args...)
	d.cmd.Stderr = d.stderr
	d.cmd.Env = append(append(os.Environ(), "NOTIFY_SOCKET="+notifyPath), s.env...)
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() {
		d.kill()
		nl.Close()
		// A -race daemon reports races on stderr (and exits 66 only when
		// it exits by itself): a killed one must be checked here.
		if strings.Contains(d.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("the daemon had a data race:\n%s", d.stderr.String())
		}
	})
	return d
}

// startDaemon starts the daemon and waits for READY=1, as systemd does.
func startDaemon(t testing.TB, s daemonSpec) *process {
	t.Helper()
	d := startProcess(t, s)
	deadline := time.After(60 * time.Second)
	for {
		select {
		case msg := <-d.notify:
			if msg == "READY=1" {
				return d
			}
		case err := <-d.exited:
			d.stopped = true
			t.Fatalf("daemon exited before READY=1: %v\n%s", err, d.stderr.String())
		case <-deadline:
			t.Fatalf("daemon not ready after 60s\n%s", d.stderr.String())
		}
	}
}

// waitExit waits for a daemon expected to refuse to start.
func (d *process) waitExit(timeout time.Duration) (exitCode int, stderr string) {
	d.t.Helper()
	select {
	case err := <-d.exited:
		d.stopped = true
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), d.stderr.String()
		}
		if err != nil {
			d.t.Fatal(err)
		}
		return 0, d.stderr.String()
	case <-time.After(timeout):
		d.t.Fatalf("daemon still running after %v\n%s", timeout, d.stderr.String())
		return 0, ""
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (d *process) stop() {
	d.t.Helper()
	if d.stopped {
		return
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		d.t.Fatal(err)
	}
	if code, stderr := d.waitExit(30 * time.Second); code != 0 {
		d.t.Fatalf("daemon exited with %d after SIGTERM\n%s", code, stderr)
	}
}

// kill is SIGKILL: no chance to flush or clean up.
func (d *process) kill() {
	if d.stopped {
		return
	}
	_ = d.cmd.Process.Kill()
	<-d.exited
	d.stopped = true
}

// podSpec describes a Guaranteed pod: one container per entry, memory in bytes.
type podSpec struct {
	uid      string
	memory   []uint64
	hugepage uint64 // 2Mi-page bytes for the first container
	selector map[string]string
}

func (p podSpec) pod() *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p-" + p.uid, Namespace: "test", UID: types.UID(p.uid)},
		Spec:       corev1.PodSpec{NodeSelector: p.selector},
	}
	for i, m := range p.memory {
		rl := corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("1"),
			corev1.ResourceMemory: *resource.NewQuantity(int64(m), resource.BinarySI),
		}
		if i == 0 && p.hugepage > 0 {
			rl["hugepages-2Mi"] = *resource.NewQuantity(int64(p.hugepage), resource.BinarySI)
		}
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: fmt.Sprintf("c%d", i), Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Limits: rl, Requests: rl},
		})
	}
	return pod
}

func (p podSpec) yaml(t testing.TB) []byte {
	t.Helper()
	data, err := yaml.Marshal(p.pod())
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// randomPod is a pod that fits a node on its own; a full partition rejects it.
func randomPod(r *rand.Rand, uid string) podSpec {
	sizes := []uint64{256 * mib, 512 * mib, gib, 3 * gib}
	p := podSpec{uid: uid}
	for range 1 + r.IntN(2) {
		p.memory = append(p.memory, sizes[r.IntN(len(sizes))])
	}
	if r.IntN(3) == 0 {
		p.hugepage = []uint64{64 * mib, 256 * mib}[r.IntN(2)]
	}
	return p
}

// op is one acknowledged operation.
type op struct {
	admit      *podSpec // nil for a release
	release    string
	decision   allocator.Decision
	generation uint64
	changed    bool // admitted or released: the generation is this op's own
	// unanswered: the request in flight at a crash; its decision is unknown.
	unanswered bool
}

// sortHistory orders acknowledged operations as the daemon executed them:
// by generation, and within a generation the operation that produced it
// before the rejections that saw it.
func sortHistory(ops []op) {
	sort.SliceStable(ops, func(i, j int) bool {
		if ops[i].generation != ops[j].generation {
			return ops[i].generation < ops[j].generation
		}
		return ops[i].changed && !ops[j].changed
	})
}

// replay runs the history through a fresh in-process allocator: the
// sequential model the daemon must match. Each replayed decision must
// equal the acknowledged one.
func replay(t testing.TB, cfg allocator.Config, ops []op) allocator.State {
	t.Helper()
	a, err := allocator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i, o := range ops {
		if o.changed {
			if o.generation != last+1 {
				t.Fatalf("history has a gap: op %d has generation %d after %d", i, o.generation, last)
			}
			last = o.generation
		}
		if o.admit != nil {
			d, err := a.Admit(o.admit.pod())
			if err != nil {
				t.Fatalf("replay admit %s: %v", o.admit.uid, err)
			}
			if !o.unanswered && !jsonEqual(d, o.decision) {
				t.Fatalf("replayed decision for %s differs:\n daemon %s\n replay %s", o.admit.uid, mustJSON(o.decision), mustJSON(d))
			}
			continue
		}
		ok, err := a.Release(types.UID(o.release))
		if err != nil || !ok {
			t.Fatalf("replay release %s: %v %v", o.release, ok, err)
		}
	}
	return a.State()
}

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}

func jsonEqual(a, b any) bool { return mustJSON(a) == mustJSON(b) }

// assertState compares the daemon's state with the replay of its history
// and checks that no byte is promised twice.
func assertState(t testing.TB, d *process, cfg allocator.Config, history []op) {
	t.Helper()
	got, err := d.Client.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := replay(t, cfg, history)
	if !jsonEqual(got.State, want) {
		t.Fatalf("daemon state differs from the sequential replay of %d acknowledged operations:\n daemon %s\n replay %s", len(history), mustJSON(got.State), mustJSON(want))
	}
	assertNoDoubleAllocation(t, cfg, got.State)
}

// assertNoDoubleAllocation: under single-numa-node every container sits on
// one node, so per node and resource the containers' memory must add up
// to the table's Reserved exactly, and Reserved never exceeds Allocatable.
func assertNoDoubleAllocation(t testing.TB, cfg allocator.Config, st allocator.State) {
	t.Helper()
	sum := map[int]map[allocator.ResourceName]uint64{}
	for _, a := range st.Allocations {
		for _, c := range a.Containers {
			ids := c.NUMANodes.IDs()
			if len(ids) != 1 {
				t.Fatalf("pod %s container %s on NUMA nodes %v under single-numa-node", a.PodUID, c.Name, ids)
			}
			if sum[ids[0]] == nil {
				sum[ids[0]] = map[allocator.ResourceName]uint64{}
			}
			for r, b := range c.Memory {
				sum[ids[0]][r] += b
			}
		}
	}
	for id, n := range st.Machine {
		for r, tab := range n.MemoryMap {
			if tab.Reserved != sum[id][r] {
				t.Fatalf("node %d %s: table reserves %d bytes, containers hold %d", id, r, tab.Reserved, sum[id][r])
			}
			if tab.Reserved > tab.Allocatable || tab.Free+tab.Reserved != tab.Allocatable {
				t.Fatalf("node %d %s: table broken: %+v", id, r, tab)
			}
		}
	}
}
