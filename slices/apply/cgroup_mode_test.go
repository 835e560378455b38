package apply

import (
	"strings"
	"testing"
)

// A kubelet shown its partition needs cgroup v1: a plan made with a v1
// host's facts is refused on a v2 host, and taken on v1 or hybrid.
func TestCheckCgroupV1Only(t *testing.T) {
	for _, mode := range []CgroupMode{CgroupV1, CgroupHybrid} {
		if err := checkCgroupV1Only([]string{"node0"}, mode); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
	}
	if err := checkCgroupV1Only(nil, CgroupV2); err != nil {
		t.Errorf("no partition shown its own machine on v2: %v", err)
	}
	err := checkCgroupV1Only([]string{"node0", "node1"}, CgroupV2)
	if err == nil || !strings.Contains(err.Error(), "partition node0") || !strings.Contains(err.Error(), "cgroupMode") {
		t.Fatalf("want a refusal naming node0 and cgroupMode, got %v", err)
	}
}
