package apply

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/render"
	"github.com/numa-partition/numa-partition/slices/systemd"
	"github.com/numa-partition/numa-partition/test/sandbox"
)

func TestMain(m *testing.M) {
	if port := os.Getenv("NP_TEST_FAKE_KUBELET"); port != "" {
		os.Exit(fakeKubelet(port))
	}
	os.Exit(sandbox.Main(m))
}

// fakeKubelet is what the test binary does when a sandbox unit runs it as
// a kubelet: answer GET /healthz with "ok" on 127.0.0.1:port.
func fakeKubelet(port string) int {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	err := http.ListenAndServe("127.0.0.1:"+port, mux)
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// fakeKubeletPath is where newEnv copies the test binary inside the
// sandbox, for units that play a kubelet or squat a port.
const fakeKubeletPath = "usr/local/libexec/numa-partition-test/fake-kubelet"

// fakeKubeletExec is an ExecStart= line running the fake kubelet on port.
func fakeKubeletExec(port int) string {
	return fmt.Sprintf("ExecStart=/usr/bin/env NP_TEST_FAKE_KUBELET=%d /%s", port, fakeKubeletPath)
}

// useFakeKubelets makes every partition's kubelet unit of f run the fake
// kubelet on its healthz port.
func useFakeKubelets(f *fixture) {
	for _, p := range f.plan.Partitions {
		k := f.file("kubelet-" + p.Name + ".service")
		k.Content = []byte(strings.Replace(string(k.Content), "ExecStart=/bin/sleep infinity", fakeKubeletExec(p.Kubelet.HealthzPort), 1))
	}
}

// waitHealthy reads status until it is healthy (the fake kubelets need a
// moment to listen) or 5 s have passed, and returns the last status.
func waitHealthy(t testing.TB, ctx context.Context, o status.Options) *status.Status {
	t.Helper()
	var st *status.Status
	for range 50 {
		var err error
		st, err = status.Read(ctx, o)
		must(t, err)
		if st.Health == status.Healthy {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return st
}

func installFakeKubelet(t testing.TB, sb *sandbox.Sandbox) {
	t.Helper()
	dst := sb.Path(fakeKubeletPath)
	if _, err := os.Stat(dst); err == nil {
		return
	}
	self, err := os.Executable()
	must(t, err)
	b, err := os.ReadFile(self)
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	must(t, os.WriteFile(dst, b, 0o755))
}

// env is one test's view of the shared sandbox: a D-Bus connection, a
// writable fake sysfs for the hugepage pools, and options for apply.
type env struct {
	mode  CgroupMode // "" = detect; CgroupV2 runs the unified code path here
	sb    *sandbox.Sandbox
	m     *systemd.Conn
	sysfs string
	log   *slog.Logger
}

const testPageSize = 2 << 20

func newEnv(t testing.TB) *env {
	t.Helper()
	sb := sandbox.Get(t)
	installFakeKubelet(t, sb)
	m, err := sb.Connect()
	if err != nil {
		t.Fatal(err)
	}
	m.JobTimeout = 20 * time.Second
	e := &env{sb: sb, m: m, sysfs: t.TempDir(), log: slog.New(slog.NewTextHandler(t.Output(), nil))}
	for node := range 2 {
		p := hugepool.Path(e.sysfs, node, testPageSize)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("0\n"), 0o644))
	}
	t.Cleanup(func() {
		// Leave the shared sandbox as the next test expects it: nothing applied.
		if _, err := Remove(context.Background(), e.opts()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		m.Close()
	})
	return e
}

func (e *env) opts() Options {
	return Options{Root: e.sb.Root, Sysfs: e.sysfs, Systemd: e.m, Version: "test", Log: e.log, CgroupMode: e.mode}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fixture is a hand-built plan and bundle: n partitions "tnodeI" with a
// slice, a runtime and a kubelet (sleep infinity), and a host-wide
// hugepages oneshot.
type fixture struct {
	plan   *planner.Plan
	bundle bundle.Bundle
}

func newFixture(n int) *fixture {
	f := &fixture{plan: &planner.Plan{Hostname: "sandbox"}}
	unitDir := "etc/systemd/system/"
	add := func(u bundle.Unit, content string) {
		p := unitDir + u.Name
		u.Files = append([]string{p}, u.Files...)
		f.bundle.Files = append(f.bundle.Files, bundle.File{Path: p, Mode: 0o644, Content: []byte(content)})
		f.bundle.Units = append(f.bundle.Units, u)
	}
	// Kept on a change, as render keeps the real oneshot (KeepOnChange).
	add(bundle.Unit{Name: "tnuma-hugepages.service", Phase: bundle.PhaseHugepages, Enable: true, Start: true, KeepOnChange: true},
		"[Unit]\nDescription=test hugepages oneshot\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n")
	for i := range n {
		name := fmt.Sprintf("tnode%d", i)
		cpu := i % 2 // the CI machine has 2 CPUs and one node
		slice := name + ".slice"
		add(bundle.Unit{Name: slice, Phase: bundle.PhaseSlice, Partition: name, Start: true,
			Cpuset: &bundle.Cpuset{CPUs: bitmask.NewCPUSet(cpu), Mems: bitmask.NewNodeSet(0)}},
			fmt.Sprintf("[Unit]\nDescription=partition %s\nBefore=slices.target\n[Slice]\nAllowedCPUs=%d\nAllowedMemoryNodes=0\n", name, cpu))
		// Pinned as templates/header.tmpl pins every partition service.
		pin := fmt.Sprintf("CPUAffinity=%d\nNUMAPolicy=bind\nNUMAMask=0\n", cpu)
		add(bundle.Unit{Name: "containerd-" + name + ".service", Phase: bundle.PhaseRuntime, Partition: name, Enable: true, Start: true},
			fmt.Sprintf("[Unit]\nDescription=runtime of %s\n[Service]\nSlice=%s\n%sExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n", name, slice, pin))
		add(bundle.Unit{Name: "kubelet-" + name + ".service", Phase: bundle.PhaseKubelet, Partition: name, Enable: true, Start: true,
			KubeletState: &bundle.KubeletState{Dir: "var/lib/kubelet-" + name, Settings: kubeletSettings(bitmask.NewCPUSet(cpu))}},
			fmt.Sprintf("[Unit]\nDescription=kubelet of %s\nAfter=containerd-%s.service\nRequires=containerd-%s.service\n[Service]\nSlice=%s\n%sExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n", name, name, name, slice, pin))
		f.plan.Partitions = append(f.plan.Partitions, planner.Partition{
			Index: i, Name: name, Slice: slice,
			Nodes: bitmask.NewNodeSet(0), CPUs: bitmask.NewCPUSet(cpu), MemoryNodes: bitmask.NewNodeSet(0),
			Kubelet: planner.Kubelet{Port: 20250 + 10*i, HealthzPort: 20248 + 10*i},
		})
		if i < 2 { // the fake sysfs has two nodes
			f.plan.Partitions[i].Memory = []planner.NodeMemory{{Node: i, Hugepages: []planner.HugepagePlan{{PageSize: testPageSize, Count: uint64(4 + i)}}}}
		}
	}
	return f
}

// typed is the fixture's bundle with what render types beside the text,
// from the fixture's plan with render's own functions: the hugepage pools,
// the ports and the partitions that need cgroup v2.
func (f *fixture) typed() (bundle.Bundle, error) {
	b := f.bundle
	pools, err := render.HugepagePools(f.plan)
	if err != nil {
		return b, err
	}
	b.Hugepages, b.Ports, b.CgroupV2Only = pools, render.Ports(f.plan, b.Units), nil
	b.Hostname, b.ReservedCPUs, b.Partitions = f.plan.Hostname, f.plan.Host.ReservedCPUs, render.PartitionsOf(f.plan)
	for _, p := range f.plan.Partitions {
		if p.Allocator.Mode == config.AllocatorModeNRI {
			b.CgroupV2Only = append(b.CgroupV2Only, p.Name)
		}
	}
	return b, nil
}

// kubeletSettings are a fixture kubelet's manager settings: its
// partition's CPUs decide its reserved ones, as in a rendered bundle.
func kubeletSettings(cpus bitmask.CPUSet) string { return "cpu=static partitionCPUs=" + cpus.String() }

// setSliceCPUs gives a partition's slice other CPUs, as render would: in
// the slice's file and cpuset, its services' pinning and its kubelet's
// manager settings.
func (f *fixture) setSliceCPUs(partition, cpus string) {
	set := bitmask.MustParseCPUList(cpus)
	for i, u := range f.bundle.Units {
		if u.Partition != partition {
			continue
		}
		file := f.file(u.Name)
		lines := strings.Split(string(file.Content), "\n")
		for j, l := range lines {
			for _, key := range []string{"AllowedCPUs=", "CPUAffinity="} {
				if strings.HasPrefix(l, key) {
					lines[j] = key + set.String()
				}
			}
		}
		file.Content = []byte(strings.Join(lines, "\n"))
		if u.Cpuset != nil {
			f.bundle.Units[i].Cpuset = &bundle.Cpuset{CPUs: set, Mems: u.Cpuset.Mems}
		}
		if u.KubeletState != nil {
			f.bundle.Units[i].KubeletState = &bundle.KubeletState{Dir: u.KubeletState.Dir, Settings: kubeletSettings(set)}
		}
	}
}

// file returns a bundle file for editing.
func (f *fixture) file(name string) *bundle.File {
	for i := range f.bundle.Files {
		if strings.HasSuffix(f.bundle.Files[i].Path, "/"+name) {
			return &f.bundle.Files[i]
		}
	}
	panic("no file " + name)
}

func (e *env) apply(t testing.TB, f *fixture, mod func(*Options)) (*Report, error) {
	t.Helper()
	o := e.opts()
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := f.typed()
	if err != nil {
		return nil, err
	}
	return Apply(ctx, o, b)
}

// hostState is what a rollback must restore: every file apply may touch
// and every unit's state.
type hostState struct {
	Files map[string]string
	Units map[string]string
	Pages map[string]string
}

func (e *env) snapshot(t testing.TB, f *fixture) hostState {
	t.Helper()
	s := hostState{Files: map[string]string{}, Units: map[string]string{}, Pages: map[string]string{}}
	for _, bf := range f.bundle.Files {
		p := e.sb.Path(bf.Path)
		b, err := os.ReadFile(p)
		if err == nil {
			s.Files[bf.Path] = string(b)
		}
		// drop-ins apply adds on cgroup v1
		ds, _ := filepath.Glob(p + ".d/*")
		for _, d := range ds {
			b, _ := os.ReadFile(d)
			s.Files[d] = string(b)
		}
	}
	// Directories apply may create (drop-in directories, its state).
	dirs := []string{"var/lib/numa-partition", OriginalsDir}
	for _, bf := range f.bundle.Files {
		dirs = append(dirs, filepath.Dir(bf.Path), bf.Path+".d")
	}
	for _, u := range f.bundle.Units {
		if u.KubeletState == nil {
			continue
		}
		// The kubelet's root dir: its state files, the stamp.
		dirs = append(dirs, u.KubeletState.Dir)
		fs, _ := filepath.Glob(e.sb.Path(u.KubeletState.Dir) + "/*")
		for _, p := range fs {
			b, _ := os.ReadFile(p)
			s.Files[p] = string(b)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(e.sb.Path(d)); err == nil {
			s.Files[d+"/"] = "(directory)"
		}
	}
	if b, err := os.ReadFile(e.sb.Path(record.Path)); err == nil {
		s.Files[record.Path] = string(b)
	}
	ctx := context.Background()
	for _, u := range f.bundle.Units {
		info, err := e.m.Unit(ctx, u.Name)
		must(t, err)
		st := info.ActiveState + "/" + info.SubState + " " + info.UnitFileState
		if strings.HasSuffix(u.Name, ".slice") && info.LoadState == "loaded" {
			st += " cpus=" + info.AllowedCPUs.String() + " mems=" + info.AllowedMemoryNodes.String()
		}
		s.Units[u.Name] = st
	}
	ps, _ := filepath.Glob(filepath.Join(e.sysfs, "devices/system/node/*/hugepages/*/nr_hugepages"))
	for _, p := range ps {
		b, _ := os.ReadFile(p)
		s.Pages[p] = strings.TrimSpace(string(b))
	}
	return s
}

func diffStates(a, b hostState) []string {
	var d []string
	cmp := func(kind string, x, y map[string]string) {
		for k, v := range x {
			if y[k] != v {
				d = append(d, fmt.Sprintf("%s %s: %q -> %q", kind, k, v, y[k]))
			}
		}
		for k, v := range y {
			if _, ok := x[k]; !ok {
				d = append(d, fmt.Sprintf("%s %s: (absent) -> %q", kind, k, v))
			}
		}
	}
	cmp("file", a.Files, b.Files)
	cmp("unit", a.Units, b.Units)
	cmp("hugepages", a.Pages, b.Pages)
	return d
}
