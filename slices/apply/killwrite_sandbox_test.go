package apply

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// killedWritePath is the file a step was writing when a kill came in the
// middle of it: the bundle file, the record or a kubelet's stamp; "" for
// a step that writes no file.
func killedWritePath(s transaction.Step) string {
	switch a := s.Action.(type) {
	case transaction.WriteFile:
		return a.Path
	case transaction.WriteRecord:
		return record.Path
	case transaction.PrepareKubeletState:
		return path.Join(a.KubeletState.Dir, transaction.KubeletStampName)
	}
	return ""
}

// crashInWrite applies f and "kills" it in the middle of step i's file
// write: after the write made its directories and its temporary file
// (half written), before the rename, as fsutil.WriteFile would leave it.
func (e *env) crashInWrite(t *testing.T, f *applytest.Fixture, i int) {
	t.Helper()
	defer func() {
		if c, ok := recover().(errCrash); !ok || c.step != i {
			t.Fatalf("apply did not crash at step %d", i+1)
		}
	}()
	_, err := e.apply(t, f, func(o *Options) {
		o.BeforeStep = func(j int, s transaction.Step) error {
			if j != i {
				return nil
			}
			p := e.sb.Path(killedWritePath(s))
			applytest.Must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			applytest.Must(t, os.WriteFile(filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".numa-partition-4242"), []byte("half"), 0o600))
			panic(errCrash{i})
		}
	})
	t.Fatalf("apply finished (%v) instead of crashing at step %d", err, i+1)
}

// tree is every file (with a hash of its content) and directory below
// the sandbox's dirs: what remove must leave byte for byte as it was.
func (e *env) tree(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range dirs {
		err := filepath.WalkDir(e.sb.Path(d), func(p string, de fs.DirEntry, err error) error {
			if os.IsNotExist(err) {
				return nil
			}
			if err != nil {
				return err
			}
			switch {
			case de.IsDir():
				out[p] = "(directory)"
			case de.Type()&fs.ModeSymlink != 0:
				l, err := os.Readlink(p)
				out[p] = "-> " + l
				return err
			default:
				b, err := os.ReadFile(p)
				out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
				return err
			}
			return nil
		})
		applytest.Must(t, err)
	}
	return out
}

func treeDiff(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			d = append(d, fmt.Sprintf("%s: (absent) -> %q", k, v))
		}
	}
	return d
}

// Repro (#24, item 18): a SIGKILL of apply during a file write left the
// write's temporary file (/etc/systemd/system/.containerd-node0.service.
// numa-partition-NNN, .../hugepages-1048576kB/.nr_hugepages.numa-
// partition-NNN) and the directories the step made (/etc/numa-partition/
// sysfs-node0/...), and neither the next apply nor remove took them away.
// Killed in every file write of a fresh apply, remove alone, and the next
// apply then remove, leave the host's files and directories as they were.
func TestKillDuringAWriteLeavesNothing(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(1)
	f.Bundle.Files = append(f.Bundle.Files, bundle.File{Path: "etc/numa-partition/sysfs-tnode0/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", Mode: 0o644, Content: []byte("4\n")})
	watched := []string{"etc/numa-partition", "etc/systemd/system", "var/lib/numa-partition", "var/lib/kubelet-tnode0"}
	pristine := e.tree(t, watched...)
	var steps []transaction.Step
	_, err := e.apply(t, f, func(o *Options) {
		o.BeforeStep = func(_ int, s transaction.Step) error { steps = append(steps, s); return nil }
	})
	applytest.Must(t, err)
	_, err = Remove(context.Background(), e.opts())
	applytest.Must(t, err)
	killed := 0
	for i, s := range steps {
		if killedWritePath(s) == "" {
			continue
		}
		killed++
		for _, next := range []string{"remove", "apply, then remove"} {
			what := fmt.Sprintf("killed while writing in step %d (%s), %s", i+1, s, next)
			e.crashInWrite(t, f, i)
			if next != "remove" {
				if _, err := e.apply(t, f, nil); err != nil {
					t.Fatalf("%s: the next apply: %v", what, err)
				}
				if left := e.temps(t, watched...); len(left) > 0 {
					t.Errorf("%s: the next apply left %v", what, left)
				}
			}
			if _, err := Remove(context.Background(), e.opts()); err != nil {
				t.Fatalf("%s: remove: %v", what, err)
			}
			if d := treeDiff(pristine, e.tree(t, watched...)); len(d) > 0 {
				t.Fatalf("%s: the host is not as before:\n%s", what, strings.Join(d, "\n"))
			}
		}
	}
	if killed < 4 {
		t.Fatalf("only %d steps write a file", killed)
	}
}

// temps are the temporary files of writes below dirs.
func (e *env) temps(t *testing.T, dirs ...string) []string {
	var out []string
	for p := range e.tree(t, dirs...) {
		if strings.Contains(filepath.Base(p), ".numa-partition-") && !strings.HasSuffix(p, transaction.StaleSuffix) {
			out = append(out, p)
		}
	}
	return out
}
