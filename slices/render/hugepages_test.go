package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

func TestKernelCmdline(t *testing.T) {
	plan := seedPlan()
	if got, want := KernelCmdline(&plan), "hugepagesz=2M hugepages=0:512,1:512 hugepagesz=1G hugepages=0:4,1:4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Zero counts are left out; a size nobody uses disappears.
	plan.Partitions[1].Memory[0].Hugepages[1].Count = 0
	plan.Partitions[0].Memory[0].Hugepages[1].Count = 0
	plan.Partitions[0].Memory[0].Hugepages[0].Count = 0
	if got, want := KernelCmdline(&plan), "hugepagesz=2M hugepages=1:512"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	plan.Partitions[1].Memory[0].Hugepages = nil
	if got := KernelCmdline(&plan); got != "" {
		t.Errorf("nothing planned: got %q", got)
	}
	for size, want := range map[uint64]string{2 * mi: "2M", gi: "1G", 64 << 10: "64K", 32 * mi: "32M", 16 * gi: "16G"} {
		if got := kernelSize(size); got != want {
			t.Errorf("kernelSize(%d) = %s, want %s", size, got, want)
		}
	}
}

func TestHugepageSpecsLargestFirst(t *testing.T) {
	plan := seedPlan()
	got := HugepageSpecs(&plan)
	want := []string{"0:1Gi=4", "1:1Gi=4", "0:2Mi=512", "1:2Mi=512"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// The hugepage view is the kubelet's, made at its every start after its
// nodes: a change of the partition's pools restarts its kubelet with the
// new view, and leaves its mount-namespace holder (so its pods) alone.
func TestHugepageViewIsTheKubelets(t *testing.T) {
	render := func(pages uint64) bundle.Bundle {
		plan := shownPartitions()
		plan.Partitions[0].Memory[0].Hugepages = []planner.HugepagePlan{{PageSize: 2 * mi, Count: pages}}
		b, err := Render(plan)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	unitOf := func(b bundle.Bundle, name string) bundle.Unit {
		for _, u := range b.Units {
			if u.Name == name {
				return u
			}
		}
		t.Fatalf("no unit %s", name)
		return bundle.Unit{}
	}
	a, b := render(16), render(24)
	kubelet := fileContent(t, a, unitPath(kubeletUnit("node0")))
	flat := strings.Join(strings.Fields(strings.ReplaceAll(kubelet, "\\\n", " ")), " ")
	nodes, pools := strings.Index(flat, " view nodes --nodes "), strings.Index(flat, " view hugepages --partition node0'")
	if nodes < 0 || pools < nodes {
		t.Errorf("kubelet-node0 is not shown its pools after its nodes:\n%s", kubelet)
	}
	view := "etc/numa-partition/sysfs-node0/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages"
	if got := fileContent(t, a, view); got != "16\n" {
		t.Errorf("%s = %q", view, got)
	}
	if !slices.Contains(unitOf(a, kubeletUnit("node0")).Files, view) {
		t.Errorf("kubelet-node0 does not restart when %s changes: %v", view, unitOf(a, kubeletUnit("node0")).Files)
	}
	holder := bundle.MountnsUnit("node0")
	if strings.Contains(fileContent(t, a, unitPath(holder)), "hugepages") {
		t.Errorf("%s binds hugepage files:\n%s", holder, fileContent(t, a, unitPath(holder)))
	}
	if !slices.Equal(unitOf(a, holder).Files, unitOf(b, holder).Files) || fileContent(t, a, unitPath(holder)) != fileContent(t, b, unitPath(holder)) {
		t.Errorf("a change of node0's pools changes %s, whose restart re-creates every pod", holder)
	}
	if fileContent(t, b, view) != "24\n" {
		t.Errorf("%s = %q after the change", view, fileContent(t, b, view))
	}
}

// shownPartitions is seedPlan with every node's hugepage sizes known, so
// that each kubelet is shown its own partition (kubeletgen.MachineOf).
func shownPartitions() planner.Plan {
	plan := seedPlan()
	for i := range plan.Partitions {
		for j := range plan.Partitions[i].Memory {
			plan.Partitions[i].Memory[j].PageSizes = []uint64{2 * mi, gi}
		}
	}
	return plan
}
