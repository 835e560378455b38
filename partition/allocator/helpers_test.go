package allocator

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/policy/memorymanager"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

const gi = uint64(1) << 30

// ctr describes a test container; mem "" means no memory at all.
type ctr struct {
	name, mem, hp string // hp: hugepages-2Mi amount
	init, sidecar bool
	burstable     bool // cpu limit only (not Guaranteed)
}

func mkPod(uid string, cs ...ctr) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "ns", UID: types.UID(uid)}}
	for _, c := range cs {
		res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		if c.mem != "" {
			res[corev1.ResourceMemory] = resource.MustParse(c.mem)
		}
		if c.hp != "" {
			res["hugepages-2Mi"] = resource.MustParse(c.hp)
		}
		k := corev1.Container{Name: c.name, Resources: corev1.ResourceRequirements{Requests: res, Limits: res}}
		if c.burstable {
			k.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		}
		if c.sidecar {
			always := corev1.ContainerRestartPolicyAlways
			k.RestartPolicy = &always
		}
		if c.init || c.sidecar {
			p.Spec.InitContainers = append(p.Spec.InitContainers, k)
		} else {
			p.Spec.Containers = append(p.Spec.Containers, k)
		}
	}
	return p
}

// uniform gives n nodes of 10Gi with 4Gi of 2Mi pages; node 0 reserves
// 1Gi of memory, so every node has 5Gi allocatable memory except node 0 (4Gi).
func uniform(n int, policy, scope string) Config {
	cfg := Config{Policy: policy, Scope: scope, PolicyOptions: topologymanager.PolicyOptions{MaxAllowableNUMANodes: max(8, n)}}
	for i := 0; i < n; i++ {
		nr := NodeResources{ID: i, Memory: 10 * gi, Hugepages: map[uint64]uint64{2 << 20: 4 * gi}, Reserved: map[ResourceName]uint64{}}
		if i == 0 {
			nr.Reserved[ResourceMemory] = gi
		}
		cfg.Nodes = append(cfg.Nodes, nr)
	}
	return cfg
}

func mustNew(t testing.TB, cfg Config) *Allocator {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// admit admits and checks the invariants and the accounting.
func admit(t testing.TB, a *Allocator, p *corev1.Pod) Decision {
	t.Helper()
	d, err := a.Admit(p)
	if err != nil {
		t.Fatalf("admit %s: %v", p.UID, err)
	}
	checkState(t, a)
	return d
}

// checkState asserts the MemoryTable invariants and that, per resource,
// the reserved memory equals the sum of the pinned blocks.
func checkState(t testing.TB, a *Allocator) {
	t.Helper()
	st := a.State()
	if err := memorymanager.CheckInvariants(st.Machine); err != nil {
		t.Fatal(err)
	}
	reserved := map[ResourceName]uint64{}
	for _, n := range st.Machine {
		for r, tb := range n.MemoryMap {
			reserved[r] += tb.Reserved
		}
	}
	blocks := map[ResourceName]uint64{}
	for _, bs := range st.Blocks {
		for _, list := range bs {
			for _, b := range list {
				blocks[b.Type] += b.Size
			}
		}
	}
	for r, v := range reserved {
		if blocks[r] != v {
			t.Fatalf("%s: reserved %d but blocks hold %d", r, v, blocks[r])
		}
	}
}

func nodesOf(d Decision) []string {
	var out []string
	for _, c := range d.Containers {
		out = append(out, fmt.Sprintf("%s:%s", c.Name, c.NUMANodes))
	}
	return out
}

func table(a *Allocator, node int, r ResourceName) MemoryTable {
	return a.State().Machine[node].MemoryMap[r]
}

var set = bitmask.NewNodeSet

func typesUID(s string) types.UID { return types.UID(s) }
