package apply

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

// TestOriginalsAreKeptAndRestored: a file that was on the host before the
// first apply is kept, survives a rolled-back apply untouched, and comes
// back with remove.
func TestOriginalsAreKeptAndRestored(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(1)
	rel := "etc/systemd/system/tnode0.slice"
	orig := "[Slice]\n# the admin's own slice\n"
	applytest.Must(t, os.WriteFile(e.sb.Path(rel), []byte(orig), 0o600))
	t.Cleanup(func() { os.Remove(e.sb.Path(rel)) })
	before := e.snapshot(t, f)

	// Rolled back at the last step: the original is back, no copy is left.
	_, err := e.apply(t, f, func(o *Options) {
		o.BeforeStep = func(_ int, s transaction.Step) error {
			if s.Kind() == transaction.KindRecord {
				return errors.New("fault at the record")
			}
			return nil
		}
	})
	if err == nil {
		t.Fatal("apply with a fault succeeded")
	}
	if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
		t.Fatalf("rollback:\n%s", strings.Join(d, "\n"))
	}
	if _, err := os.Stat(e.sb.Path(transaction.OriginalsDir)); !os.IsNotExist(err) {
		t.Errorf("rollback left %s: %v", transaction.OriginalsDir, err)
	}

	_, err = e.apply(t, f, nil)
	applytest.Must(t, err)
	rec, err := record.Read(e.sb.Root)
	applytest.Must(t, err)
	if rf, ok := rec.File(rel); !ok || !rf.Original {
		t.Errorf("record of %s: %+v, want original=true", rel, rf)
	}
	if b, err := os.ReadFile(e.sb.Path(transaction.OriginalsDir + "/" + rel)); err != nil || string(b) != orig {
		t.Errorf("kept original = %q, %v", b, err)
	}
	_, err = Remove(context.Background(), e.opts())
	applytest.Must(t, err)
	if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
		t.Fatalf("remove did not put the original back:\n%s", strings.Join(d, "\n"))
	}
	if fi, err := os.Stat(e.sb.Path(rel)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("original's mode: %v, %v", fi, err)
	}
}

// TestHugepageShortfallIsReported: a kernel that allocates fewer pages
// than planned gives a warning naming node, size and numbers; apply goes on.
func TestHugepageShortfallIsReported(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	short := func(path string, count uint64) error { // this kernel has room for 3 pages per pool
		return hugepool.Write(path, min(count, 3))
	}
	rep, err := e.apply(t, f, func(o *Options) { o.PoolWriter = short })
	applytest.Must(t, err)
	if len(rep.Shortfalls) != 2 || rep.Shortfalls[0] != (transaction.Shortfall{Node: 0, PageSize: applytest.TestPageSize, Wanted: 4, Got: 3}) {
		t.Fatalf("shortfalls = %+v", rep.Shortfalls)
	}
	w := strings.Join(rep.Warnings, "\n")
	for _, want := range []string{"node0 hugepages-2Mi: wanted 4 pages, the kernel allocated 3", "node1 hugepages-2Mi: wanted 5 pages, the kernel allocated 3"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	// The next apply tries again (the pool is still short).
	rep, err = e.apply(t, f, nil)
	applytest.Must(t, err)
	if !strings.Contains(strings.Join(rep.Steps, "\n"), "hugepages node1 hugepages-2Mi=5") {
		t.Errorf("re-apply did not retry the short pool: %v", rep.Steps)
	}
}
