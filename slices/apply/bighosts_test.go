package apply

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// Apply on the big hosts of numatest (issue #41). Their bundles cannot
// be applied to a real systemd on a test machine: their slices name 144
// to 512 CPUs and 34 nodes the machine lacks, and their units run real
// containerds and kubelets. What is measured here is the rest of apply,
// the real code on the real bundle: apply --dry-run of a root no
// systemd runs on (Offline: the tree's files, record, unit files and
// hugepage pools read, the steps planned, the diff made). The cost of
// systemd's jobs per partition is BenchmarkApply8Partitions's, on the
// sandbox's real systemd; the steps planned (Plan, pure) are
// transaction's (bighosts_test.go there).

// dryRunBig is apply --dry-run of h's bundle on an empty root no systemd
// runs on.
func dryRunBig(h applytest.BigHost, t testing.TB, root string) *Report {
	t.Helper()
	o := Options{Root: root, Sysfs: h.Sysfs, Systemd: systemd.NewOffline(root), Offline: true, DryRun: true,
		CgroupMode: h.Mode, Version: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	rep, err := Apply(context.Background(), o, h.Bundle)
	applytest.Must(t, err)
	return rep
}

// TestApplyPlansBigHosts: offline, the dry run of the big hosts' bundles
// on an empty host lists as many steps as Plan (whose steps on them
// transaction's TestPlanBigHosts checks).
func TestApplyPlansBigHosts(t *testing.T) {
	for _, s := range numatest.BigHosts {
		t.Run(s.Name, func(t *testing.T) {
			h := applytest.NewBigHost(t, s)
			d, err := transaction.NewDesired(h.Bundle, h.Mode)
			applytest.Must(t, err)
			fresh := transaction.Plan(d, transaction.Current{})
			rep := dryRunBig(h, t, t.TempDir())
			if !rep.Changed || !rep.Offline || len(rep.Steps) != len(fresh) {
				t.Errorf("dry run: changed %v, offline %v, %d steps (Plan: %d)\n%s", rep.Changed, rep.Offline, len(rep.Steps), len(fresh), strings.Join(rep.Steps, "\n"))
			}
		})
	}
}

// BenchmarkApplyBigHosts: for each big host, apply --dry-run, offline,
// on an empty root (dry-run). Its steps alone, pure, are transaction's
// BenchmarkApplyBigHosts (plan=fresh, plan=noop).
func BenchmarkApplyBigHosts(b *testing.B) {
	for _, s := range numatest.BigHosts {
		h := applytest.NewBigHost(b, s)
		b.Run(s.Name+"/dry-run", func(b *testing.B) {
			root := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				dryRunBig(h, b, root)
			}
		})
	}
}
