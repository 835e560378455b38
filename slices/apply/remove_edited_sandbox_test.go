package apply

import (
	"context"
	"errors"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
)

// Repro (#38, item 2): a rendered unit the admin edited after apply was
// deleted by remove. remove deletes a file only when it is what apply
// wrote (the record's sha256): an edited one is kept and reported, in
// the report (dry run too) and as a warning, and the original it
// replaced stays kept; every other file goes as before.
func TestRemoveKeepsAUnitEditedAfterApply(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(1)
	edited := "etc/systemd/system/kubelet-tnode0.service"
	replaced := "etc/systemd/system/tnode0.slice" // an original was there
	applytest.Must(t, os.WriteFile(e.sb.Path(replaced), []byte("[Slice]\n# the admin's own slice\n"), 0o644))
	t.Cleanup(func() { _ = os.Remove(e.sb.Path(edited)); _ = os.Remove(e.sb.Path(replaced)) })
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	for _, rel := range []string{edited, replaced} {
		b, err := os.ReadFile(e.sb.Path(rel))
		applytest.Must(t, err)
		applytest.Must(t, os.WriteFile(e.sb.Path(rel), append(b, "# the admin's edit\n"...), 0o644))
	}
	want := map[string]string{}
	for _, rel := range []string{edited, replaced} {
		b, err := os.ReadFile(e.sb.Path(rel))
		applytest.Must(t, err)
		want[rel] = string(b)
	}

	o := e.opts()
	o.DryRun = true
	dry, err := Remove(context.Background(), o)
	applytest.Must(t, err)
	checkKept(t, "dry run", dry, edited, replaced)

	rep, err := Remove(context.Background(), e.opts())
	applytest.Must(t, err)
	checkKept(t, "remove", rep, edited, replaced)
	for rel, content := range want {
		if b, err := os.ReadFile(e.sb.Path(rel)); err != nil || string(b) != content {
			t.Errorf("remove changed the edited /%s: %q %v", rel, b, err)
		}
	}
	if _, err := os.Stat(e.sb.Path(path.Join(transaction.OriginalsDir, replaced))); err != nil {
		t.Errorf("remove dropped the original of the edited /%s: %v", replaced, err)
	}
	for _, rel := range []string{"etc/systemd/system/containerd-tnode0.service", record.Path} {
		if _, err := os.Lstat(e.sb.Path(rel)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("remove left /%s (not edited): %v", rel, err)
		}
	}
	applytest.Must(t, os.RemoveAll(e.sb.Path(transaction.OriginalsDir)))
}

// checkKept checks that rep keeps exactly the files rels, reported and
// warned about.
func checkKept(t *testing.T, what string, rep *RemoveReport, rels ...string) {
	t.Helper()
	if len(rep.Kept) != len(rels) {
		t.Fatalf("%s kept %+v; want %v", what, rep.Kept, rels)
	}
	warnings := strings.Join(rep.Warnings, "\n")
	for _, rel := range rels {
		found := false
		for _, k := range rep.Kept {
			found = found || k.Path == "/"+rel && strings.Contains(k.Reason, "changed after apply")
		}
		if !found {
			t.Errorf("%s: /%s not reported kept as changed: %+v", what, rel, rep.Kept)
		}
		if !strings.Contains(warnings, "kept /"+rel+": it was changed after apply") {
			t.Errorf("%s: no warning about /%s:\n%s", what, rel, warnings)
		}
		if strings.Contains(strings.Join(rep.Actions, "\n"), "/"+rel) {
			t.Errorf("%s lists an action on the kept /%s: %v", what, rel, rep.Actions)
		}
	}
}

// The same rule in apply (#38, item 2): a file of the previous
// generation no longer rendered is deleted only when it is what apply
// wrote; an edited one fails the apply, naming it, which rolls back.
func TestApplyKeepsAnEditedFileNoLongerRendered(t *testing.T) {
	e := newEnv(t)
	edited := "etc/systemd/system/kubelet-tnode1.service"
	t.Cleanup(func() { _ = os.Remove(e.sb.Path(edited)) })
	_, err := e.apply(t, applytest.NewFixture(2), nil)
	applytest.Must(t, err)
	b, err := os.ReadFile(e.sb.Path(edited))
	applytest.Must(t, err)
	content := append(b, "# the admin's edit\n"...)
	applytest.Must(t, os.WriteFile(e.sb.Path(edited), content, 0o644))

	_, err = e.apply(t, applytest.NewFixture(1), nil)
	var kept *transaction.KeptError
	if !errors.As(err, &kept) || kept.Path != e.sb.Path(edited) || !strings.Contains(kept.Reason, "changed after apply") {
		t.Fatalf("apply dropping the edited /%s: %v; want it kept, named", edited, err)
	}
	if after, err := os.ReadFile(e.sb.Path(edited)); err != nil || string(after) != string(content) {
		t.Errorf("apply changed the edited /%s: %q %v", edited, after, err)
	}
}
