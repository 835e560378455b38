package preflight

import (
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
)

// A kubelet shown its partition by a bundle rendered for v1: a plan made
// with a v1 host's facts is refused on a v2 host, and taken on v1 or
// hybrid.
func TestCgroupV1Only(t *testing.T) {
	for _, mode := range []cgroupmode.Mode{cgroupmode.V1, cgroupmode.Hybrid} {
		if err := cgroupV1Only([]string{"node0"}, mode); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
	}
	if err := cgroupV1Only(nil, cgroupmode.V2); err != nil {
		t.Errorf("no partition shown its own machine on v2: %v", err)
	}
	err := cgroupV1Only([]string{"node0", "node1"}, cgroupmode.V2)
	if err == nil || !strings.Contains(err.Error(), "partition node0") || !strings.Contains(err.Error(), "cgroupMode") {
		t.Fatalf("want a refusal naming node0 and cgroupMode, got %v", err)
	}
}

// A kubelet rendered to read its slice's v2 usage with openat2 hidden: a
// plan made with a v2 host's facts is refused on v1 and hybrid hosts.
func TestUnifiedViews(t *testing.T) {
	if err := unifiedViews([]string{"node0"}, cgroupmode.V2); err != nil {
		t.Errorf("v2: %v", err)
	}
	for _, mode := range []cgroupmode.Mode{cgroupmode.V1, cgroupmode.Hybrid} {
		if err := unifiedViews(nil, mode); err != nil {
			t.Errorf("%s, no v2 view: %v", mode, err)
		}
		err := unifiedViews([]string{"node1", "node0"}, mode)
		if err == nil || !strings.Contains(err.Error(), "partition node1") || !strings.Contains(err.Error(), "cgroup v2 host") {
			t.Errorf("%s: want a refusal naming node1 and cgroup v2, got %v", mode, err)
		}
	}
}
