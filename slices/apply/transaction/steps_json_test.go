package transaction

import (
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
)

var updateSteps = flag.Bool("update", false, "rewrite testdata/steps.golden from the current Plan")

// allKindsSteps are the steps of three hosts that between them need every
// kind of step: a fresh cgroup v1 host, a host one partition left (its
// slice's runtime state and a bridge are still there), and a kubelet whose
// managers' settings changed over state on disk.
func allKindsSteps(t *testing.T) []Step {
	t.Helper()
	steps := Plan(desired(t, CgroupHybrid, nil), Current{})

	base := desired(t, CgroupV2, nil)
	gone := desired(t, CgroupV2, withoutLastPartition)
	c := applied(base)
	c.StaleSlices = []string{"tnode1.slice"}
	c.StaleNetwork = []StaleNetwork{{Bridge: "npbr0"}, {Namespace: "np-tnode0", Devices: []string{"ens5f1"}}}
	c.Hugepages[HugepageKey{0, applytest.TestPageSize}] = 1
	steps = append(steps, Plan(gone, c)...)

	c = applied(base)
	st := c.KubeletStates["kubelet-tnode0.service"]
	st.Stamp, st.Files = "cpu=none", []string{"var/lib/kubelet-tnode0/cpu_manager_state"}
	c.KubeletStates["kubelet-tnode0.service"] = st
	c.Files["etc/systemd/system/containerd-tnode1.service"] = FileState{Content: []byte("old"), Mode: 0o644}
	return append(steps, Plan(base, c)...)
}

// Steps are apply's output (`apply --output json`, the text report):
// both forms of every kind stay as they are (testdata/steps.golden).
func TestStepsOutputIsStable(t *testing.T) {
	steps := allKindsSteps(t)
	kinds := map[Kind]bool{}
	var b strings.Builder
	for _, s := range steps {
		kinds[s.Kind()] = true
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(s.String() + "\n" + string(js) + "\n")
	}
	for _, k := range declaredKinds(t) {
		if !kinds[k] {
			t.Errorf("no step of kind %s in the golden steps", k)
		}
	}
	golden := filepath.Join("testdata", "steps.golden")
	if *updateSteps {
		applytest.Must(t, os.MkdirAll("testdata", 0o755))
		applytest.Must(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	applytest.Must(t, err)
	if b.String() != string(want) {
		t.Errorf("steps changed (go test -run TestStepsOutputIsStable -update rewrites %s):\n%s", golden, b.String())
	}
}

// declaredKinds are the values of the package's Kind constants: every
// kind of step, read from the source so that a new one cannot miss the
// golden file.
func declaredKinds(t *testing.T) []Kind {
	t.Helper()
	files, err := filepath.Glob("*.go")
	applytest.Must(t, err)
	var kinds []Kind
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		applytest.Must(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			v, ok := n.(*ast.ValueSpec)
			if !ok || v.Type == nil || len(v.Values) != 1 {
				return true
			}
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Kind" {
				if lit, ok := v.Values[0].(*ast.BasicLit); ok {
					k, err := strconv.Unquote(lit.Value)
					applytest.Must(t, err)
					kinds = append(kinds, Kind(k))
				}
			}
			return true
		})
	}
	if len(kinds) < 16 {
		t.Fatalf("found %d kinds of step in the source, want at least the 16 of the golden file", len(kinds))
	}
	return kinds
}
