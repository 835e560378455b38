package apply

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	bundle "github.com/numa-partition/numa-partition/slices"
)

// fakeKubelet answers GET /healthz with "ok", like kubelet's healthz port.
const fakeKubelet = `import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/healthz"
        self.send_response(200 if ok else 404)
        self.end_headers()
        self.wfile.write(b"ok" if ok else b"not found")
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

// TestStatus: healthy when everything runs and answers, degraded with a
// reason for a stopped unit, a dead kubelet and a file edited by hand,
// not-applied after remove.
func TestStatus(t *testing.T) {
	e := newEnv(t)
	f := newFixture(2)
	for i := range f.plan.Partitions {
		f.plan.Partitions[i].Memory = nil // status reads the real /sys here
	}
	script := "etc/numa-partition/tfake-kubelet.py"
	f.bundle.Files = append(f.bundle.Files, bundle.File{Path: script, Mode: 0o644, Content: []byte(fakeKubelet)})
	for _, p := range f.plan.Partitions {
		k := f.file("kubelet-" + p.Name + ".service")
		k.Content = []byte(strings.Replace(string(k.Content), "ExecStart=/bin/sleep infinity",
			fmt.Sprintf("ExecStart=/usr/bin/python3 /%s %d", script, p.Kubelet.HealthzPort), 1))
		for j, u := range f.bundle.Units {
			if u.Name == "kubelet-"+p.Name+".service" {
				f.bundle.Units[j].Files = append(f.bundle.Units[j].Files, script)
			}
		}
	}
	_, err := e.apply(t, f, nil)
	must(t, err)
	ctx := context.Background()
	so := StatusOptions{Root: e.sb.Root, Sysfs: "/sys", Systemd: e.m}

	var st *Status
	for range 50 { // python needs a moment to listen
		st, err = ReadStatus(ctx, so)
		must(t, err)
		if st.Health == Healthy {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st.Health != Healthy || st.Generation != 1 {
		t.Fatalf("status after apply: %s generation %d, problems %q", st.Health, st.Generation, st.Problems)
	}
	if len(st.Partitions) != 2 {
		t.Fatalf("%d partitions, want 2", len(st.Partitions))
	}
	for _, p := range st.Partitions {
		if !p.Kubelet.OK || len(p.Units) != 3 || len(p.Nodes) != 1 || p.Nodes[0].TotalBytes == 0 {
			t.Errorf("partition %s: %+v", p.Name, p)
		}
		if st.CgroupMode != CgroupV2 {
			want := map[string]string{"tnode0": "0", "tnode1": "1"}[p.Name]
			if p.EffectiveCPUs != want || p.EffectiveMems != "0" {
				t.Errorf("%s effective cpus/mems %q/%q, want %s/0", p.Name, p.EffectiveCPUs, p.EffectiveMems, want)
			}
		}
	}

	// Break three things.
	must(t, e.m.StopUnit(ctx, "kubelet-tnode1.service"))
	slice := e.sb.Path("etc/systemd/system/tnode0.slice")
	b, err := os.ReadFile(slice)
	must(t, err)
	must(t, os.WriteFile(slice, append(b, "# edited by hand\n"...), 0o644))
	st, err = ReadStatus(ctx, so)
	must(t, err)
	problems := strings.Join(st.Problems, "\n")
	for _, want := range []string{
		"kubelet-tnode1.service is inactive/dead",
		"kubelet of tnode1: unreachable",
		"drift: /etc/systemd/system/tnode0.slice was changed after apply",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("status problems lack %q:\n%s", want, problems)
		}
	}
	if st.Health != Degraded || len(st.Drift) != 1 {
		t.Errorf("health %s, drift %q; want degraded with one drift", st.Health, st.Drift)
	}

	// apply repairs it.
	_, err = e.apply(t, f, nil)
	must(t, err)
	_, err = Remove(ctx, e.opts())
	must(t, err)
	st, err = ReadStatus(ctx, so)
	must(t, err)
	if st.Health != NotApplied {
		t.Errorf("after remove: %s, want not-applied", st.Health)
	}
}
