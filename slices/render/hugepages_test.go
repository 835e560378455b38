package render

import (
	"testing"
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
