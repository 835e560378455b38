package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/drift"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/systemd/systemdtest"
)

// TestApplyReapplyRemove is the life cycle against the real systemd:
// apply starts everything and the properties read back over D-Bus, a second
// apply changes nothing, a change restarts only what it touches, remove
// leaves the host as it was.
func TestApplyReapplyRemove(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	ctx := context.Background()
	before := e.snapshot(t, f)

	rep, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	if !rep.Changed || rep.Generation != 1 {
		t.Fatalf("first apply: changed=%v generation=%d, want true, 1", rep.Changed, rep.Generation)
	}
	t.Logf("cgroup mode %s, %d steps:\n%s", rep.CgroupMode, len(rep.Steps), strings.Join(rep.Steps, "\n"))

	for _, u := range f.Bundle.Units {
		info, err := e.m.Unit(ctx, u.Name)
		applytest.Must(t, err)
		if !info.Active() {
			t.Errorf("%s is %s/%s, want active", u.Name, info.ActiveState, info.SubState)
		}
		if u.Enable && info.UnitFileState != "enabled" {
			t.Errorf("%s UnitFileState = %q, want enabled", u.Name, info.UnitFileState)
		}
	}
	for i, p := range f.Plan.Partitions {
		info, err := e.m.Unit(ctx, p.Slice)
		applytest.Must(t, err)
		if !info.AllowedCPUs.Equal(p.CPUs) || info.AllowedMemoryNodes != bitmask.NewNodeSet(0) {
			t.Errorf("%s AllowedCPUs=%s AllowedMemoryNodes=%s, want %s and 0", p.Slice, info.AllowedCPUs, info.AllowedMemoryNodes, p.CPUs)
		}
		kubelet, err := e.m.Unit(ctx, "kubelet-"+p.Name+".service")
		applytest.Must(t, err)
		if !strings.HasPrefix(kubelet.ControlGroup, "/"+p.Slice+"/") {
			t.Errorf("kubelet of %s runs in %s, want under /%s", p.Name, kubelet.ControlGroup, p.Slice)
		}
		if rep.CgroupMode != transaction.CgroupV2 {
			// Enforced on v1 too: the service's own CPUAffinity and the cpuset v1 group.
			got := procStatus(t, e, kubelet.MainPID, "Cpus_allowed_list")
			if got != p.CPUs.String() {
				t.Errorf("kubelet of %s: Cpus_allowed_list %s, want %s", p.Name, got, p.CPUs)
			}
			if cpus, err := cpusetV1File(e.sb.Root, p.Slice, "cpuset.cpus"); err != nil || cpus != p.CPUs.String() {
				t.Errorf("cpuset v1 of %s: cpus %q, %v; want %s", p.Slice, cpus, err, p.CPUs)
			}
			if procs, _ := cpusetV1File(e.sb.Root, p.Slice, "cgroup.procs"); len(strings.Fields(procs)) != 2 {
				t.Errorf("cpuset v1 of %s holds %q, want the runtime's and the kubelet's pids", p.Slice, procs)
			}
		}
		want := uint64(4 + i)
		if n, err := hugepool.Read(hugepool.Path(e.sysfs, i%2, applytest.TestPageSize)); err != nil || n != want {
			t.Errorf("node%d hugepages = %d, %v; want %d", i%2, n, err, want)
		}
	}
	rec, err := record.Read(e.sb.Root)
	applytest.Must(t, err)
	if rec == nil || rec.Generation != 1 || len(rec.Files) != len(f.Bundle.Files) {
		t.Fatalf("record after apply: %+v", rec)
	}
	for _, rf := range rec.Files {
		b, err := os.ReadFile(e.sb.Path(rf.Path))
		applytest.Must(t, err)
		if record.Hash(b) != rf.SHA256 {
			t.Errorf("record hash of %s does not match the file", rf.Path)
		}
	}

	// The same inputs again: nothing to do, nothing written, no reload.
	kubeletPID := mainPID(t, e, "kubelet-tnode0.service")
	recBytes, _ := os.ReadFile(e.sb.Path(record.Path))
	faulty := &systemdtest.Faulty{Manager: e.m}
	rep, err = e.apply(t, f, func(o *Options) { o.Systemd = faulty })
	applytest.Must(t, err)
	if rep.Changed || len(rep.Steps) != 0 || faulty.Count() != 0 {
		t.Fatalf("re-apply: changed=%v steps=%v systemd calls=%v, want no changes", rep.Changed, rep.Steps, faulty.Calls)
	}
	if b, _ := os.ReadFile(e.sb.Path(record.Path)); string(b) != string(recBytes) {
		t.Error("re-apply rewrote the record")
	}
	if got := mainPID(t, e, "kubelet-tnode0.service"); got != kubeletPID {
		t.Errorf("a re-apply with nothing to do restarted kubelet-tnode0 (pid %d -> %d)", kubeletPID, got)
	}

	// A unit that stopped (a crash, a hand stop) is started again, and
	// nothing the record lists changed: the record stays byte for byte,
	// not left pending (before, apply wrote it pending ahead of the start
	// and no step wrote the finished one).
	applytest.Must(t, e.m.StopUnit(ctx, "kubelet-tnode0.service"))
	rep, err = e.apply(t, f, nil)
	applytest.Must(t, err)
	if len(rep.Steps) == 0 || rep.Steps[0] != "start kubelet-tnode0.service (not active)" || slices.Contains(rep.Steps, "record") {
		t.Fatalf("re-apply after a stop: steps %q, want the start (and on cgroup v1 its attach) only", rep.Steps)
	}
	if b, _ := os.ReadFile(e.sb.Path(record.Path)); string(b) != string(recBytes) {
		t.Errorf("re-apply after a stop changed the record:\n%s", b)
	}
	if rec, err := record.Read(e.sb.Root); err != nil || rec.Pending {
		t.Errorf("re-apply after a stop left the record pending (%v)", err)
	}
	kubeletPID = mainPID(t, e, "kubelet-tnode0.service")

	// A change to one kubelet restarts that kubelet only.
	kf := f.File("kubelet-tnode1.service")
	kf.Content = append(kf.Content, []byte("# changed\n")...)
	faulty = &systemdtest.Faulty{Manager: e.m}
	rep, err = e.apply(t, f, func(o *Options) { o.Systemd = faulty })
	applytest.Must(t, err)
	wantCalls := []string{"daemon-reload", "enable [kubelet-tnode1.service]", "restart kubelet-tnode1.service"}
	if strings.Join(faulty.Calls, "|") != strings.Join(wantCalls, "|") || rep.Generation != 2 {
		t.Errorf("change of one kubelet: calls %q generation %d; want %q, 2", faulty.Calls, rep.Generation, wantCalls)
	}
	if got := mainPID(t, e, "kubelet-tnode0.service"); got != kubeletPID {
		t.Errorf("kubelet-tnode0 was restarted (pid %d -> %d) though it did not change", kubeletPID, got)
	}

	rrep, err := Remove(ctx, e.opts())
	applytest.Must(t, err)
	if rrep.Generation != 2 {
		t.Errorf("remove removed generation %d, want 2", rrep.Generation)
	}
	if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
		t.Errorf("remove did not restore the host:\n%s", strings.Join(d, "\n"))
	}
	if _, err := os.Stat(e.sb.Path(record.Path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("record still there after remove: %v", err)
	}
	if _, err := os.Stat(e.sb.Path("run/systemd/system.control/tnode0.slice.d")); err == nil {
		if ents, _ := os.ReadDir(e.sb.Path("run/systemd/system.control/tnode0.slice.d")); len(ents) > 0 {
			t.Errorf("runtime properties of tnode0.slice left behind: %v", ents)
		}
	}
}

func mainPID(t *testing.T, e *env, unit string) uint32 {
	t.Helper()
	info, err := e.m.Unit(context.Background(), unit)
	applytest.Must(t, err)
	if info.MainPID == 0 {
		t.Fatalf("%s has no MainPID (%s/%s)", unit, info.ActiveState, info.SubState)
	}
	return info.MainPID
}

// procStatus reads a field of /proc/<pid>/status of a sandbox process.
func procStatus(t *testing.T, e *env, pid uint32, field string) string {
	t.Helper()
	b, err := os.ReadFile(e.sb.Path("proc/" + itoa(int(pid)) + "/status"))
	applytest.Must(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == field {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return ""
}

// TestApplyCgroupV2Path runs the unified-mode code path on the sandbox
// (whose real mode is hybrid): no v1 drop-ins or cpuset groups, the slices'
// CPU sets set live and read back, and status calls the mode change drift.
func TestApplyCgroupV2Path(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	rep, err := e.apply(t, f, func(o *Options) { o.CgroupMode = transaction.CgroupV2 })
	applytest.Must(t, err)
	for _, s := range rep.Steps {
		if strings.Contains(s, "cpuset-v1") || strings.Contains(s, "attach-v1") {
			t.Errorf("unified mode planned a v1 step: %s", s)
		}
	}
	ctx := context.Background()
	for _, p := range f.Plan.Partitions {
		info, err := e.m.Unit(ctx, p.Slice)
		applytest.Must(t, err)
		if !info.AllowedCPUs.Equal(p.CPUs) {
			t.Errorf("%s AllowedCPUs = %s, want %s", p.Slice, info.AllowedCPUs, p.CPUs)
		}
		if _, err := cpusetV1File(e.sb.Root, p.Slice, "cpuset.cpus"); err == nil {
			t.Errorf("unified mode created a cpuset v1 group for %s", p.Slice)
		}
	}
	st, err := status.Read(ctx, status.Options{Root: e.sb.Root, Sysfs: "/sys", Systemd: e.m, ProbeTimeout: 200 * time.Millisecond})
	applytest.Must(t, err)
	if !strings.Contains(strings.Join(st.Drift, "\n"), "cgroup mode is hybrid, applied on unified") {
		t.Errorf("status drift = %q, want the mode change", st.Drift)
	}
}

// cpusetV1File is file of slice's cpuset v1 group below root, trimmed:
// where the transaction keeps a partition's cpuset on cgroup v1.
func cpusetV1File(root, slice, file string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "sys/fs/cgroup/cpuset", drift.SliceCgroup(slice), file))
	return strings.TrimSpace(string(b)), err
}
