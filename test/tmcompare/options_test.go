package tmcompare

import (
	"testing"

	ktm "k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	tm "github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// TestPolicyOptionsAsKubelet: the project's one reader of
// topologyManagerPolicyOptions (tm.NewPolicyOptions, whose rule the
// planner reports) accepts exactly the maps kubelet's NewPolicyOptions
// accepts, reads the same values from them, and its map form (Map)
// reads back the same in kubelet.
func TestPolicyOptionsAsKubelet(t *testing.T) {
	closest, maxNodes := tm.OptionPreferClosestNUMANodes, tm.OptionMaxAllowableNUMANodes
	var cases []map[string]string
	cases = append(cases, nil, map[string]string{}, map[string]string{"turbo": "true"}, map[string]string{closest: "true", "turbo": "1"})
	for _, v := range []string{"true", "false", "T", "F", "1", "0", "TRUE", "yes", "", " true"} {
		cases = append(cases, map[string]string{closest: v})
	}
	for _, v := range []string{"8", "9", "16", "64", "010", "+12", "7", "0", "-1", "", "x", "9.0", " 9"} {
		cases = append(cases, map[string]string{maxNodes: v}, map[string]string{maxNodes: v, closest: "true"})
	}
	for _, m := range cases {
		ours, err := tm.NewPolicyOptions(m)
		kube, kerr := ktm.NewPolicyOptions(discard, m)
		if (err == nil) != (kerr == nil) {
			t.Errorf("%v: ours %v, kubelet %v", m, err, kerr)
			continue
		}
		if err != nil {
			continue
		}
		if ours.PreferClosestNUMA != kube.PreferClosestNUMA || ours.NUMANodeLimit() != kube.MaxAllowableNUMANodes {
			t.Errorf("%v: ours %+v (limit %d), kubelet %+v", m, ours, ours.NUMANodeLimit(), kube)
		}
		back, err := ktm.NewPolicyOptions(discard, ours.Map())
		if err != nil || back != kube {
			t.Errorf("%v: kubelet reads our map form %v as %+v (%v), want %+v", m, ours.Map(), back, err, kube)
		}
	}
}
