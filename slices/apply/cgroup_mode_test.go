package apply

import (
	"strings"
	"testing"
)

// A kubelet shown its partition by a bundle rendered for v1: a plan made
// with a v1 host's facts is refused on a v2 host, and taken on v1 or
// hybrid.
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

// A kubelet rendered to read its slice's v2 usage with openat2 hidden: a
// plan made with a v2 host's facts is refused on v1 and hybrid hosts.
func TestCheckUnifiedViews(t *testing.T) {
	if err := checkUnifiedViews([]string{"node0"}, CgroupV2); err != nil {
		t.Errorf("v2: %v", err)
	}
	for _, mode := range []CgroupMode{CgroupV1, CgroupHybrid} {
		if err := checkUnifiedViews(nil, mode); err != nil {
			t.Errorf("%s, no v2 view: %v", mode, err)
		}
		err := checkUnifiedViews([]string{"node1", "node0"}, mode)
		if err == nil || !strings.Contains(err.Error(), "partition node1") || !strings.Contains(err.Error(), "cgroup v2 host") {
			t.Errorf("%s: want a refusal naming node1 and cgroup v2, got %v", mode, err)
		}
	}
}
