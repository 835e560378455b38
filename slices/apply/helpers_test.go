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

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/hugepool"
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
func useFakeKubelets(f *applytest.Fixture) {
	for _, p := range f.Plan.Partitions {
		k := f.File("kubelet-" + p.Name + ".service")
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
		applytest.Must(t, err)
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
	applytest.Must(t, err)
	b, err := os.ReadFile(self)
	applytest.Must(t, err)
	applytest.Must(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	applytest.Must(t, os.WriteFile(dst, b, 0o755))
}

// env is one test's view of the shared sandbox: a D-Bus connection, a
// writable fake sysfs for the hugepage pools, and options for apply.
type env struct {
	mode  transaction.CgroupMode // "" = detect; CgroupV2 runs the unified code path here
	sb    *sandbox.Sandbox
	m     *systemd.Conn
	sysfs string
	log   *slog.Logger
}

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
		p := hugepool.Path(e.sysfs, node, applytest.TestPageSize)
		applytest.Must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		applytest.Must(t, os.WriteFile(p, []byte("0\n"), 0o644))
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

func (e *env) apply(t testing.TB, f *applytest.Fixture, mod func(*Options)) (*Report, error) {
	t.Helper()
	o := e.opts()
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := f.Typed()
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

func (e *env) snapshot(t testing.TB, f *applytest.Fixture) hostState {
	t.Helper()
	s := hostState{Files: map[string]string{}, Units: map[string]string{}, Pages: map[string]string{}}
	for _, bf := range f.Bundle.Files {
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
	dirs := []string{"var/lib/numa-partition", transaction.OriginalsDir}
	for _, bf := range f.Bundle.Files {
		dirs = append(dirs, filepath.Dir(bf.Path), bf.Path+".d")
	}
	for _, u := range f.Bundle.Units {
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
	for _, u := range f.Bundle.Units {
		info, err := e.m.Unit(ctx, u.Name)
		applytest.Must(t, err)
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
