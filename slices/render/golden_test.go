package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/pmezard/go-difflib/difflib"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current renderer")

// TestGolden compares every rendered file of every example with
// testdata/golden/<example>/tree/, and the units, modes, kernel command
// line and warnings with bundle.json (the bundle's JSON form). `go test ./slices/render -run Golden
// -update` rewrites them; review the diff like code.
func TestGolden(t *testing.T) {
	for _, e := range examples {
		t.Run(e.name, func(t *testing.T) {
			_, _, b := e.render(t)
			dir := filepath.Join("testdata", "golden", e.name)
			summary, err := json.MarshalIndent(b, "", "  ") // contents are not in the JSON
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]byte{"bundle.json": append(summary, '\n')}
			for _, f := range b.Files {
				want[filepath.Join("tree", f.Path)] = f.Content
			}
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				for p, c := range want {
					full := filepath.Join(dir, p)
					if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(full, c, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			have := map[string][]byte{}
			err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(dir, p)
				have[rel], err = os.ReadFile(p)
				return err
			})
			if err != nil {
				t.Fatalf("reading %s (run with -update to create it): %v", dir, err)
			}
			var names []string
			for p := range want {
				names = append(names, p)
			}
			sort.Strings(names)
			for _, p := range names {
				got, ok := have[p]
				if !ok {
					t.Errorf("%s: rendered but missing from %s (run with -update)", p, dir)
					continue
				}
				if !bytes.Equal(got, want[p]) {
					diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
						A: difflib.SplitLines(string(got)), B: difflib.SplitLines(string(want[p])),
						FromFile: "golden/" + p, ToFile: "rendered/" + p, Context: 2,
					})
					t.Errorf("%s differs from golden:\n%s", p, diff)
				}
			}
			for p := range have {
				if _, ok := want[p]; !ok {
					t.Errorf("%s: in %s but no longer rendered (run with -update)", p, dir)
				}
			}
		})
	}
}

// TestRenderIsDeterministic: the same plan gives byte-identical bundles.
func TestRenderIsDeterministic(t *testing.T) {
	for _, e := range examples {
		plan, _ := e.load(t)
		a, err := Render(plan)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			b, err := Render(plan)
			if err != nil {
				t.Fatal(err)
			}
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if !bytes.Equal(ja, jb) || len(a.Files) != len(b.Files) {
				t.Fatalf("%s: two renders differ", e.name)
			}
			for j := range a.Files {
				if !bytes.Equal(a.Files[j].Content, b.Files[j].Content) {
					t.Fatalf("%s: %s differs between two renders", e.name, a.Files[j].Path)
				}
			}
		}
	}
}
