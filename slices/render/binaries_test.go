package render

import (
	"slices"
	"strings"
	"testing"
)

// #37, a kubelet or containerd canary: a partition's own binaries change
// only that partition's kubelet and containerd units, so apply restarts
// those two and nothing of the other partitions.
func TestPartitionBinariesChangeOnlyTheirUnits(t *testing.T) {
	before, err := Render(seedPlan())
	if err != nil {
		t.Fatal(err)
	}
	plan := seedPlan()
	p := &plan.Partitions[1]
	p.Kubelet.Binary, p.Runtime.Binary = "/opt/kubernetes/v1.37.3/kubelet", "/opt/containerd/v2.2.1/bin/containerd"
	after, err := Render(plan)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]string{}
	for _, f := range before.Files {
		old[f.Path] = string(f.Content)
	}
	var changed []string
	for _, f := range after.Files {
		// The plan the bundle carries changes with it; it starts nothing.
		if old[f.Path] != string(f.Content) && !strings.HasSuffix(f.Path, "/plan.json") {
			changed = append(changed, f.Path)
		}
	}
	want := []string{unitPath(containerdUnit(p.Name)), unitPath(kubeletUnit(p.Name))}
	if !slices.Equal(changed, want) {
		t.Fatalf("files changed by node1's binaries: %v, want %v", changed, want)
	}
	for path, bin := range map[string]string{want[0]: p.Runtime.Binary, want[1]: p.Kubelet.Binary} {
		if content, _ := renderedFile(after, path); !strings.Contains(content, "\nExecStart="+bin+" ") && !strings.Contains(content, " "+bin+" ") {
			t.Errorf("%s does not run %s:\n%s", path, bin, content)
		}
	}
}
