package apply

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
)

// TestStatus: healthy when everything runs and answers, degraded with a
// reason for a stopped unit, a dead kubelet and a file edited by hand,
// not-applied after remove.
func TestStatus(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	for i := range f.Plan.Partitions {
		f.Plan.Partitions[i].Memory = nil // status reads the real /sys here
	}
	useFakeKubelets(f)
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	ctx := context.Background()
	so := status.Options{Root: e.sb.Root, Sysfs: "/sys", Systemd: e.m}

	st := waitHealthy(t, ctx, so)
	if st.Health != status.Healthy || st.Generation != 1 {
		t.Fatalf("status after apply: %s generation %d, problems %q", st.Health, st.Generation, st.Problems)
	}
	if len(st.Partitions) != 2 {
		t.Fatalf("%d partitions, want 2", len(st.Partitions))
	}
	for _, p := range st.Partitions {
		if !p.Kubelet.OK || len(p.Units) != 3 || len(p.Nodes) != 1 || p.Nodes[0].TotalBytes == 0 {
			t.Errorf("partition %s: %+v", p.Name, p)
		}
		if st.CgroupMode != transaction.CgroupV2 {
			want := map[string]string{"tnode0": "0", "tnode1": "1"}[p.Name]
			if p.EffectiveCPUs != want || p.EffectiveMems != "0" {
				t.Errorf("%s effective cpus/mems %q/%q, want %s/0", p.Name, p.EffectiveCPUs, p.EffectiveMems, want)
			}
		}
	}

	// Break three things.
	applytest.Must(t, e.m.StopUnit(ctx, "kubelet-tnode1.service"))
	slice := e.sb.Path("etc/systemd/system/tnode0.slice")
	b, err := os.ReadFile(slice)
	applytest.Must(t, err)
	applytest.Must(t, os.WriteFile(slice, append(b, "# edited by hand\n"...), 0o644))
	st, err = status.Read(ctx, so)
	applytest.Must(t, err)
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
	if st.Health != status.Degraded || len(st.Drift) != 1 {
		t.Errorf("health %s, drift %q; want degraded with one drift", st.Health, st.Drift)
	}

	// apply repairs it.
	_, err = e.apply(t, f, nil)
	applytest.Must(t, err)
	_, err = Remove(ctx, e.opts())
	applytest.Must(t, err)
	st, err = status.Read(ctx, so)
	applytest.Must(t, err)
	if st.Health != status.NotApplied {
		t.Errorf("after remove: %s, want not-applied", st.Health)
	}
}
