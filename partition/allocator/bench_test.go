package allocator

import (
	"fmt"
	"testing"
)

// benchAdmit admits and releases one pod on a 64-node partition that
// already holds background pods; one op = one admission + one release.
func benchAdmit(b *testing.B, policy, scope, mem string) {
	cfg := uniform(64, policy, scope)
	a := mustNew(b, cfg)
	for i := 0; i < 40; i++ {
		if _, err := a.Admit(mkPod(fmt.Sprint("bg", i), ctr{name: "c", mem: "3Gi", hp: "1Gi"})); err != nil {
			b.Fatal(err)
		}
	}
	p := mkPod("bench", ctr{name: "i", mem: "1Gi", init: true}, ctr{name: "a", mem: mem, hp: "2Gi"}, ctr{name: "b", mem: "1Gi"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, err := a.Admit(p)
		if err != nil || !d.Admitted {
			b.Fatalf("%+v %v", d, err)
		}
		if ok, _ := a.Release(p.UID); !ok {
			b.Fatal("release")
		}
	}
}

// BenchmarkAdmit64Nodes: a 3-container pod that fits one node.
func BenchmarkAdmit64Nodes(b *testing.B) { benchAdmit(b, "restricted", ScopeContainer, "2Gi") }

// BenchmarkAdmit64NodesPodScope: the same in pod scope.
func BenchmarkAdmit64NodesPodScope(b *testing.B) { benchAdmit(b, "best-effort", ScopePod, "2Gi") }

// BenchmarkAdmit64NodesMultiNode: a container needing 3 nodes (bounded search).
func BenchmarkAdmit64NodesMultiNode(b *testing.B) {
	benchAdmit(b, "best-effort", ScopeContainer, "14Gi")
}

// BenchmarkAdmitLargePod admits and releases one pod of the most
// containers the allocator admits (MaxContainersPerPod, 24 of them init
// containers): the cost is linear in the pod's size (it was quadratic:
// 18 s for 9,000 containers).
func BenchmarkAdmitLargePod(b *testing.B) {
	cfg := uniform(2, "best-effort", "")
	a := mustNew(b, cfg)
	var cs []ctr
	const inits = 24
	for i := 0; i < inits; i++ {
		cs = append(cs, ctr{name: fmt.Sprintf("init%d", i), mem: "1Mi", init: true})
	}
	for i := 0; i < MaxContainersPerPod-inits; i++ {
		cs = append(cs, ctr{name: fmt.Sprintf("c%d", i), mem: "1Mi"})
	}
	p := mkPod("large", cs...)
	for b.Loop() {
		d, err := a.Admit(p)
		if err != nil || !d.Admitted {
			b.Fatalf("%v %v", d.Reason, err)
		}
		if ok, err := a.Release(p.UID); !ok || err != nil {
			b.Fatal(err)
		}
	}
}
