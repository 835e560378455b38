package apply

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/hostiletest"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/status"
)

// Repro (#24, items 1 and 2, against a real systemd, --root being the
// sandbox's /proc/<pid>/root as docs suggest): apply, status and remove
// below a root with links out of it write, read or delete nothing
// outside it.
//
// apply: a unit file that is a link out (absolute, relative, "..", to a
// device, to a FIFO) is refused, naming it; the record's directory linked
// out is resolved inside the root.
func TestApplyThroughHostileLinksWritesNothingOutside(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(1)
	o := newOutsideMounted(t, "outside the root\n")
	unit := "etc/systemd/system/containerd-tnode0.service"
	for name, target := range hostiletest.LinksOut(t, e.sb.Root, filepath.Dir(unit), o.Canary) {
		plant(t, e.sb.Root, unit, target)
		err := hostiletest.Within(t, "apply via "+name, func() error { _, err := e.apply(t, f, nil); return err })
		wantNamed(t, "apply with the unit file a link ("+name+")", err, e.sb.Path(unit))
	}
	applytest.Must(t, os.Remove(e.sb.Path(unit)))
	o.Check(t)

	recordDir := e.sb.Path(filepath.Dir(record.Path))
	if _, err := os.Lstat(recordDir); err == nil {
		t.Fatalf("%s is there before any apply", recordDir)
	}
	plant(t, e.sb.Root, filepath.Dir(record.Path), o.Dir)
	t.Cleanup(func() { _ = os.Remove(recordDir) })
	// Dangling inside the root (the sandbox has no such directory):
	// refused, naming it.
	_, err := e.apply(t, f, nil)
	wantNamed(t, "apply with the record's directory a link out, dangling inside the root", err, recordDir)
	o.Check(t)
	// There inside the root: the record goes there.
	applytest.Must(t, os.MkdirAll(e.sb.Path(o.Dir), 0o755))
	t.Cleanup(func() { _ = os.RemoveAll(e.sb.Path(o.Dir)) })
	if _, err := e.apply(t, f, nil); err != nil {
		t.Fatalf("apply with the record's directory a link out: %v", err)
	}
	if _, err := os.Stat(e.sb.Path(filepath.Join(o.Dir, "applied.json"))); err != nil {
		t.Errorf("the record is not inside the root, where the link leads from there: %v", err)
	}
	o.Check(t)
	_, err = Remove(context.Background(), e.opts())
	applytest.Must(t, err)
	o.Check(t)
}

// status: a recorded file replaced by a link out is drift naming it, not
// a read of the file outside. remove: it deletes the link, not its
// target, and a record naming a "../.." path deletes nothing outside.
func TestStatusAndRemoveThroughHostileLinksTouchNothingOutside(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(1)
	o := newOutsideMounted(t, "outside the root\n")
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	slice := "etc/systemd/system/tnode0.slice"
	for name, target := range hostiletest.LinksOut(t, e.sb.Root, filepath.Dir(slice), o.Canary) {
		plant(t, e.sb.Root, slice, target)
		var st *status.Status
		err := hostiletest.Within(t, "status via "+name, func() error {
			var err error
			st, err = status.Read(context.Background(), status.Options{Root: e.sb.Root, Sysfs: e.sysfs, Systemd: e.m})
			return err
		})
		if err != nil {
			t.Fatalf("status with %s a link (%s): %v", slice, name, err)
		}
		drift := strings.Join(st.Drift, "\n")
		if !strings.Contains(drift, "/"+slice+" was replaced") || !strings.Contains(drift, e.sb.Path(slice)) {
			t.Errorf("status with %s a link (%s): drift %q; want it named as replaced", slice, name, st.Drift)
		}
	}
	o.Check(t)
	// A record naming a path that climbs out of the root: refused,
	// naming it, before remove changes anything.
	good, err := os.ReadFile(e.sb.Path(record.Path))
	applytest.Must(t, err)
	rec, err := record.Read(e.sb.Root)
	applytest.Must(t, err)
	climb := strings.Repeat("../", 40) + strings.TrimPrefix(o.Canary, "/")
	rec.Files = append(rec.Files, record.File{Path: climb, SHA256: "x", Mode: 0o644})
	raw, err := json.Marshal(rec)
	applytest.Must(t, err)
	applytest.Must(t, os.WriteFile(e.sb.Path(record.Path), raw, 0o644))
	_, err = Remove(context.Background(), e.opts())
	wantNamed(t, "remove with a record entry climbing out", err, climb)
	o.Check(t)
	// The link is not what apply wrote: kept (deleting it would lose
	// where it led) and reported (#38), and its target untouched.
	applytest.Must(t, os.WriteFile(e.sb.Path(record.Path), good, 0o644))
	rep, err := Remove(context.Background(), e.opts())
	if err != nil {
		t.Fatalf("remove: %v", err)
	}
	if len(rep.Kept) != 1 || rep.Kept[0].Path != "/"+slice || !strings.Contains(rep.Kept[0].Reason, "replaced after apply") {
		t.Errorf("remove with %s a link: kept %+v; want it kept as replaced", slice, rep.Kept)
	}
	if _, err := os.Lstat(e.sb.Path(slice)); err != nil {
		t.Errorf("remove took the link at %s: %v", slice, err)
	}
	applytest.Must(t, os.Remove(e.sb.Path(slice)))
	o.Check(t)
}
