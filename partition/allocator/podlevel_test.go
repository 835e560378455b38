package allocator

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// TestPodLevelResourcesRule: kubelet leaves a Guaranteed pod unpinned only
// when spec.resources actually sets cpu, memory or hugepages-*
// (IsPodLevelResourcesSet); a present but empty spec.resources, or one
// naming only other resources, is pinned like any other. Under
// single-numa-node such a pod that fits no single node is then rejected.
// Every policy and scope.
func TestPodLevelResourcesRule(t *testing.T) {
	q := resource.MustParse
	cases := []struct {
		name   string
		res    *corev1.ResourceRequirements
		pinned bool
	}{
		{"no spec.resources", nil, true},
		{"empty spec.resources {}", &corev1.ResourceRequirements{}, true},
		{"empty maps", &corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}, true},
		{"only an extended resource", &corev1.ResourceRequirements{Limits: corev1.ResourceList{"example.com/gpu": q("1")}}, true},
		{"pod-level cpu", &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}}, false},
		{"pod-level memory limit", &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}}, false},
		{"pod-level hugepages", &corev1.ResourceRequirements{Limits: corev1.ResourceList{"hugepages-2Mi": q("2Mi")}}, false},
	}
	policies := []string{topologymanager.PolicyNone, topologymanager.PolicyBestEffort, topologymanager.PolicyRestricted, topologymanager.PolicySingleNUMANode}
	for _, policy := range policies {
		for _, scope := range []string{ScopeContainer, ScopePod} {
			for i, c := range cases {
				t.Run(fmt.Sprintf("%s/%s/%s", policy, scope, c.name), func(t *testing.T) {
					a := mustNew(t, uniform(2, policy, scope))
					// 11Gi fits no single node (10Gi and 9Gi allocatable), but both.
					p := mkPod(fmt.Sprintf("p%d", i), ctr{name: "c", mem: "11Gi"})
					p.Spec.Resources = c.res
					d, err := a.Admit(p)
					if err != nil {
						t.Fatal(err)
					}
					checkState(t, a)
					wantAdmitted := !(c.pinned && policy == topologymanager.PolicySingleNUMANode)
					if d.Admitted != wantAdmitted {
						t.Fatalf("admitted %v (reason %q), want %v", d.Admitted, d.Reason, wantAdmitted)
					}
					if d.Admitted && d.Pinned != c.pinned {
						t.Fatalf("pinned %v, want %v", d.Pinned, c.pinned)
					}
				})
			}
		}
	}
}
