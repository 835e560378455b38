package allocator

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/numa-partition/numa-partition/partition/allocator/kubevirt"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

const hp2M ResourceName = "hugepages-2Mi"

// M1: the initial Node Map.
func TestM1InitialTables(t *testing.T) {
	a := mustNew(t, uniform(2, "best-effort", ""))
	st := a.State()
	want0 := MemoryTable{TotalMemSize: 10 * gi, SystemReserved: gi, Allocatable: 5 * gi, Free: 5 * gi} // kubelet's layout: MemTotal
	if got := st.Machine[0].MemoryMap[ResourceMemory]; got != want0 {
		t.Errorf("node 0 memory: %+v, want %+v", got, want0)
	}
	wantHP := MemoryTable{TotalMemSize: 4 * gi, Allocatable: 4 * gi, Free: 4 * gi}
	if got := st.Machine[1].MemoryMap[hp2M]; got != wantHP {
		t.Errorf("node 1 hugepages: %+v", got)
	}
	if n := st.Machine[1]; n.NumberOfAssignments != 0 || !reflect.DeepEqual(n.Cells, []int{1}) {
		t.Errorf("node 1: %+v", n)
	}
	checkState(t, a)
}

// M1 (better than kubelet) and M2: configuration errors.
func TestM2Configuration(t *testing.T) {
	cfg := uniform(2, "best-effort", "")
	cfg.Nodes[0].Reserved[ResourceMemory] = 0
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("no reserved memory: %v", err)
	}
	cfg = uniform(2, "best-effort", "")
	cfg.Nodes[1].Reserved["hugepages-1Gi"] = gi
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "hugepages-1Gi") {
		t.Errorf("reserved unknown resource: %v", err)
	}
	cfg = uniform(2, "best-effort", "")
	cfg.Nodes[1].Reserved[hp2M] = 5 * gi
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("reserved > total (kubelet underflows): %v", err)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.Scope = "node" },
		func(c *Config) { c.Policy = "strict" },
		func(c *Config) { c.Nodes = nil },
		func(c *Config) { c.PreferClosestNUMA = true },
		func(c *Config) { c.TieBreak = "random" },
		func(c *Config) { c.KubeVirtOverhead = "v1" },
		func(c *Config) { c.Nodes[1].ID = 0 },
	} {
		cfg := uniform(2, "best-effort", "")
		bad(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("accepted %+v", cfg)
		}
	}
}

// M3: only Guaranteed pods are pinned.
func TestM3OnlyGuaranteedPinned(t *testing.T) {
	a := mustNew(t, uniform(2, "restricted", ""))
	before := a.State().Machine
	for _, p := range []*corev1.Pod{
		mkPod("burst", ctr{name: "a", mem: "1Gi", burstable: true}),
		mkPod("init-burst", ctr{name: "i", mem: "1Gi", init: true, burstable: true}, ctr{name: "a", mem: "1Gi"}),
		mkPod("besteffort", ctr{name: "a"}),
	} {
		if p.UID == "besteffort" {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		}
		d := admit(t, a, p)
		if !d.Admitted || d.Pinned || len(d.Containers) != 0 {
			t.Errorf("%s: %+v", p.UID, d)
		}
	}
	if !reflect.DeepEqual(before, a.State().Machine) {
		t.Error("non-guaranteed pods changed the tables")
	}
	d := admit(t, a, mkPod("g", ctr{name: "a", mem: "1Gi"}))
	if !d.Pinned || d.Containers[0].NUMANodes != set(0) {
		t.Errorf("guaranteed: %+v", d)
	}
}

// M4: a multi-node group hint is not preferred when one node could hold
// the request; restricted rejects, best-effort pins on the group.
func TestM4GroupHintNotPreferred(t *testing.T) {
	for _, pol := range []string{"restricted", "best-effort"} {
		a := mustNew(t, uniform(2, pol, ""))
		d := admit(t, a, mkPod("big", ctr{name: "a", mem: "8Gi"}))
		if !d.Admitted || d.Containers[0].NUMANodes != set(0, 1) {
			t.Fatalf("%s big: %+v", pol, d)
		}
		if tb := table(a, 0, ResourceMemory); tb.Reserved != 5*gi {
			t.Fatalf("fill in ascending order: node 0 %+v", tb)
		}
		d = admit(t, a, mkPod("small", ctr{name: "a", mem: "1Gi"}))
		if pol == "restricted" {
			if d.Admitted || !strings.HasPrefix(d.Reason, ReasonTopologyAffinity) {
				t.Fatalf("restricted small: %+v", d)
			}
		} else if !d.Admitted || d.Containers[0].NUMANodes != set(0, 1) {
			t.Fatalf("best-effort small: %+v", d)
		}
	}
}

// M4 step 4 and M5: a node used by a single-NUMA pod cannot join a
// multi-node mask; no hint is {} which the Topology Manager admits, and
// Allocate fails.
func TestM4M5SingleVsCross(t *testing.T) {
	a := mustNew(t, uniform(2, "restricted", ""))
	admit(t, a, mkPod("one", ctr{name: "a", mem: "1Gi"}))
	d := admit(t, a, mkPod("big", ctr{name: "a", mem: "8Gi"}))
	if d.Admitted || !strings.HasPrefix(d.Reason, ReasonUnexpected) || !strings.Contains(d.Reason, "preferred hint violates NUMA node allocation") {
		t.Fatalf("%+v", d)
	}
}

func TestM5NothingFits(t *testing.T) {
	cases := map[string]string{
		"restricted":       "failed to find NUMA nodes to extend the current topology hint",
		"best-effort":      "failed to find NUMA nodes to extend the current topology hint",
		"single-numa-node": "failed to get the default NUMA affinity",
		"none":             "failed to get the default NUMA affinity",
	}
	for pol, msg := range cases {
		a := mustNew(t, uniform(2, pol, ""))
		d := admit(t, a, mkPod("huge", ctr{name: "a", mem: "100Gi"}))
		if d.Admitted || !strings.HasPrefix(d.Reason, ReasonUnexpected) || !strings.Contains(d.Reason, msg) {
			t.Errorf("%s: %+v", pol, d)
		}
	}
}

// M8: filling in ascending node order, +1 assignment per resource per node.
func TestM8AllocateFillsAscending(t *testing.T) {
	a := mustNew(t, uniform(2, "best-effort", ""))
	d := admit(t, a, mkPod("p", ctr{name: "a", mem: "8Gi", hp: "2Gi"}))
	if d.Containers[0].NUMANodes != set(0, 1) {
		t.Fatalf("%+v", d)
	}
	st := a.State()
	if m := st.Machine[0].MemoryMap; m[ResourceMemory].Reserved != 5*gi || m[hp2M].Reserved != 2*gi {
		t.Errorf("node 0: %+v", m)
	}
	if m := st.Machine[1].MemoryMap; m[ResourceMemory].Reserved != 3*gi || m[hp2M].Reserved != 0 {
		t.Errorf("node 1: %+v", m)
	}
	for id := 0; id < 2; id++ {
		if n := st.Machine[id]; n.NumberOfAssignments != 2 || !reflect.DeepEqual(n.Cells, []int{0, 1}) {
			t.Errorf("node %d: %d assignments, cells %v", id, n.NumberOfAssignments, n.Cells)
		}
	}
}

// M8 step 2: a Topology Manager hint too small for the memory is extended
// to the best superset hint; restricted rejects the non-preferred merge.
func TestM8ExtendHint(t *testing.T) {
	cpu := Hints{Containers: map[string][]topologymanager.ProviderHints{"a": {{"cpu": {topologymanager.NewHint(true, 0)}}}}}
	a := mustNew(t, uniform(2, "best-effort", ""))
	d, err := a.AdmitWithHints(mkPod("p", ctr{name: "a", mem: "8Gi"}), cpu)
	if err != nil || !d.Admitted || d.Containers[0].NUMANodes != set(0, 1) {
		t.Fatalf("best-effort: %+v %v", d, err)
	}
	a = mustNew(t, uniform(2, "restricted", ""))
	d, err = a.AdmitWithHints(mkPod("p", ctr{name: "a", mem: "8Gi"}), cpu)
	if err != nil || d.Admitted || !strings.HasPrefix(d.Reason, ReasonTopologyAffinity) {
		t.Fatalf("restricted: %+v %v", d, err)
	}
}

// M9: app containers reuse regular init containers' memory; sidecars never
// are reused; after start only app and sidecar memory stays reserved.
func TestM9InitReuse(t *testing.T) {
	a := mustNew(t, uniform(2, "best-effort", ""))
	d := admit(t, a, mkPod("p", ctr{name: "i", mem: "2Gi", init: true}, ctr{name: "a", mem: "1Gi"}))
	if got := nodesOf(d); !reflect.DeepEqual(got, []string{"i:0", "a:0"}) {
		t.Fatalf("%v", got)
	}
	if tb := table(a, 0, ResourceMemory); tb.Reserved != gi || a.State().Machine[0].NumberOfAssignments != 1 {
		t.Fatalf("after start: %+v, %d assignments", tb, a.State().Machine[0].NumberOfAssignments)
	}
	a = mustNew(t, uniform(2, "best-effort", ""))
	admit(t, a, mkPod("p", ctr{name: "s", mem: "1Gi", sidecar: true}, ctr{name: "i", mem: "2Gi", init: true}, ctr{name: "a", mem: "1Gi"}))
	if tb := table(a, 0, ResourceMemory); tb.Reserved != 2*gi {
		t.Fatalf("sidecar + app: %+v", tb)
	}
	// During admission the init container held 2Gi: a node with 2.5Gi free fits it.
	a = mustNew(t, uniform(1, "restricted", ""))
	admit(t, a, mkPod("filler", ctr{name: "f", mem: "2560Mi"}))
	d = admit(t, a, mkPod("p", ctr{name: "i", mem: "2Gi", init: true}, ctr{name: "a", mem: "2Gi"}))
	if !d.Admitted {
		t.Fatalf("app must reuse the init container's 2Gi: %+v", d)
	}
}

// M10: release returns everything; cells reset.
func TestM10Release(t *testing.T) {
	a := mustNew(t, uniform(3, "best-effort", ""))
	initial := a.State().Machine
	admit(t, a, mkPod("a", ctr{name: "a", mem: "8Gi", hp: "5Gi"}))
	admit(t, a, mkPod("b", ctr{name: "b", mem: "1Gi"}))
	for _, uid := range []string{"a", "b"} {
		ok, err := a.Release(typesUID(uid))
		if err != nil || !ok {
			t.Fatalf("release %s: %v %v", uid, ok, err)
		}
		checkState(t, a)
	}
	if !reflect.DeepEqual(initial, a.State().Machine) {
		t.Fatalf("after release: %+v", a.State().Machine)
	}
	if ok, err := a.Release("a"); ok || err != nil {
		t.Fatalf("second release: %v %v", ok, err)
	}
}

// M11: a pod rejected half-way keeps nothing (kubelet keeps the earlier
// containers until its next admission; the decisions are the same).
func TestM11RejectedPodRollsBack(t *testing.T) {
	a := mustNew(t, uniform(2, "restricted", ScopeContainer))
	initial := a.State().Machine
	d := admit(t, a, mkPod("p", ctr{name: "a", mem: "1Gi"}, ctr{name: "b", mem: "8Gi"}))
	if d.Admitted || !strings.Contains(d.Reason, `container "b"`) {
		t.Fatalf("%+v", d)
	}
	if !reflect.DeepEqual(initial, a.State().Machine) {
		t.Fatal("rejected pod left memory reserved")
	}
}

// M12: the none policy still pins memory on the default hint.
func TestM12NonePins(t *testing.T) {
	a := mustNew(t, uniform(2, "none", ""))
	admit(t, a, mkPod("x", ctr{name: "a", mem: "4Gi"}))
	d := admit(t, a, mkPod("p", ctr{name: "a", mem: "2Gi"}))
	if !d.Pinned || d.Containers[0].NUMANodes != set(1) {
		t.Fatalf("%+v", d)
	}
}

// 5.2: pod scope gives every container the pod's NUMA set; container
// scope places each container on its own.
func TestScopes(t *testing.T) {
	pod := func() *corev1.Pod { return mkPod("p", ctr{name: "a", mem: "4Gi"}, ctr{name: "b", mem: "4Gi"}) }
	a := mustNew(t, uniform(2, "best-effort", ScopePod))
	if got := nodesOf(admit(t, a, pod())); !reflect.DeepEqual(got, []string{"a:0-1", "b:0-1"}) {
		t.Errorf("pod scope: %v", got)
	}
	a = mustNew(t, uniform(2, "best-effort", ScopeContainer))
	if got := nodesOf(admit(t, a, pod())); !reflect.DeepEqual(got, []string{"a:0", "b:1"}) {
		t.Errorf("container scope: %v", got)
	}
	a = mustNew(t, uniform(2, "single-numa-node", ScopePod))
	if d := admit(t, a, pod()); d.Admitted || !strings.HasPrefix(d.Reason, ReasonTopologyAffinity) {
		t.Errorf("pod scope single-numa-node: %+v", d)
	}
	a = mustNew(t, uniform(2, "single-numa-node", ScopeContainer))
	if got := nodesOf(admit(t, a, pod())); !reflect.DeepEqual(got, []string{"a:0", "b:1"}) {
		t.Errorf("container scope single-numa-node: %v", got)
	}
}

// A virt-launcher pod is one VM: it is placed as one unit (pod scope)
// even where the partition's scope is container; other pods keep the
// configured scope.
func TestLauncherPodIsOneUnit(t *testing.T) {
	launcher := func(uid string) *corev1.Pod {
		p := mkPod(uid, ctr{name: "compute", mem: "4Gi"}, ctr{name: "guest-console-log", mem: "4Gi"})
		p.Labels = map[string]string{kubevirt.LauncherLabel: kubevirt.LauncherLabelValue}
		return p
	}
	a := mustNew(t, uniform(2, "best-effort", ScopeContainer))
	if got := nodesOf(admit(t, a, launcher("vm"))); !reflect.DeepEqual(got, []string{"compute:0-1", "guest-console-log:0-1"}) {
		t.Errorf("launcher pod, container scope: %v (want both containers on the pod's nodes)", got)
	}
	a = mustNew(t, uniform(2, "single-numa-node", ScopeContainer))
	if d := admit(t, a, launcher("vm")); d.Admitted || !strings.Contains(d.Reason, "(pod, best hint") {
		t.Errorf("launcher pod, single-numa-node: 8Gi on 9Gi+10Gi nodes must be refused as one unit: %+v", d)
	}
	// The same containers without the label are placed one by one.
	plain := launcher("plain")
	plain.Labels = nil
	if got := nodesOf(admit(t, a, plain)); !reflect.DeepEqual(got, []string{"compute:0", "guest-console-log:1"}) {
		t.Errorf("unlabelled pod, container scope: %v", got)
	}
	// The launcher pod of a VMI manifest carries the label.
	pod, err := kubevirt.LauncherPod([]byte("apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: vm, namespace: ns, uid: u1}\nspec: {domain: {resources: {requests: {memory: 1Gi}}}}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if !kubevirt.IsLauncherPod(pod.Labels) {
		t.Errorf("LauncherPod: labels %v", pod.Labels)
	}
}

// Other providers' hints are merged with the memory hints.
func TestExtraHints(t *testing.T) {
	a := mustNew(t, uniform(2, "single-numa-node", ScopeContainer))
	extra := Hints{Containers: map[string][]topologymanager.ProviderHints{"a": {{"cpu": {topologymanager.NewHint(true, 1)}}}}}
	d, err := a.AdmitWithHints(mkPod("p", ctr{name: "a", mem: "1Gi"}), extra)
	if err != nil || d.Containers[0].NUMANodes != set(1) {
		t.Fatalf("%+v %v", d, err)
	}
	extra = Hints{Pod: []topologymanager.ProviderHints{{"gpu": {}}}}
	a = mustNew(t, uniform(2, "restricted", ScopePod))
	d, err = a.AdmitWithHints(mkPod("p", ctr{name: "a", mem: "1Gi"}), extra)
	if err != nil || d.Admitted {
		t.Fatalf("a device with no possible affinity must reject under restricted: %+v %v", d, err)
	}
}

func TestBadInput(t *testing.T) {
	a := mustNew(t, uniform(2, "best-effort", ""))
	p := mkPod("", ctr{name: "a", mem: "1Gi"})
	if _, err := a.Admit(p); err == nil || !strings.Contains(err.Error(), "uid") {
		t.Errorf("no uid: %v", err)
	}
	admit(t, a, mkPod("dup", ctr{name: "a", mem: "1Gi"}))
	if _, err := a.Admit(mkPod("dup", ctr{name: "a", mem: "1Gi"})); err == nil {
		t.Error("duplicate uid accepted")
	}
	p = mkPod("milli", ctr{name: "a", mem: "1Gi"})
	p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("100m")
	p.Spec.Containers[0].Resources.Limits = p.Spec.Containers[0].Resources.Requests
	if _, err := a.Admit(p); err == nil || !strings.Contains(err.Error(), "spec.containers[0]") {
		t.Errorf("fractional bytes: %v", err)
	}
	if _, err := a.Admit(mkPod("twice", ctr{name: "a", mem: "1Gi"}, ctr{name: "a", mem: "1Gi"})); err == nil {
		t.Error("duplicate container name accepted")
	}
	if _, err := a.Release(""); err == nil {
		t.Error("empty uid release accepted")
	}
	if _, err := a.AdmitVMI([]byte("kind: Pod")); err == nil {
		t.Error("bad VMI accepted")
	}
}

func TestAdmitVMI(t *testing.T) {
	cfg := uniform(2, "single-numa-node", "")
	cfg.KubeVirtOverhead = "v0.26"
	a := mustNew(t, cfg)
	vmi := `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: vm, namespace: ns, uid: vm-1}
spec:
  domain:
    cpu: {cores: 67, dedicatedCpuPlacement: true}
    memory: {hugepages: {pageSize: 2Mi}}
    resources: {requests: {memory: 4Gi}, limits: {memory: 4Gi}}
`
	d, err := a.AdmitVMI([]byte(vmi))
	if err != nil || !d.Admitted || !d.Pinned {
		t.Fatalf("%+v %v", d, err)
	}
	c := d.Containers[0]
	if c.Memory[ResourceMemory] != 723591169 || c.Memory[hp2M] != 4*gi || c.NUMANodes != set(0) {
		t.Fatalf("%+v", c)
	}
	checkState(t, a)
}

func TestStateJSONAndRestore(t *testing.T) {
	cfg := uniform(3, "best-effort", "")
	a := mustNew(t, cfg)
	admit(t, a, mkPod("a", ctr{name: "i", mem: "2Gi", init: true}, ctr{name: "c", mem: "8Gi", hp: "1Gi"}))
	admit(t, a, mkPod("b", ctr{name: "c", mem: "1Gi"}, ctr{name: "d", mem: "1Gi", burstable: true}))
	admit(t, a, mkPod("c", ctr{name: "c", mem: "1Gi", burstable: true}))
	st := a.State()
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	r, drift, err := Restore(cfg, back)
	if err != nil || len(drift) != 0 {
		t.Fatalf("restore: %v %v", drift, err)
	}
	if !reflect.DeepEqual(r.State(), st) {
		t.Fatalf("restored state differs")
	}
	// Drift: node 2 loses memory; the pods still fit and are recharged.
	cfg.Nodes[2].Memory = 8 * gi
	r, drift, err = Restore(cfg, back)
	if err != nil || len(drift) != 1 || !strings.Contains(drift[0], "node 2 memory") {
		t.Fatalf("drift: %v %v", drift, err)
	}
	checkState(t, r)
	if len(r.Allocations()) != 3 {
		t.Fatal("allocations lost")
	}
	// Node 1 shrinks so that pod a's 8Gi on {0,1} no longer fits.
	cfg.Nodes[1].Memory = 5 * gi
	if _, _, err := Restore(cfg, back); err == nil || !strings.Contains(err.Error(), "no longer fits") {
		t.Fatalf("shrunk: %v", err)
	}
}

// The KubeVirt CR's settings reach the launcher pod: the ratio scales the
// overhead, a bad ratio is refused when the allocator is made.
func TestAdmitVMIOptions(t *testing.T) {
	vmi := []byte(`
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: vm, namespace: ns, uid: vm-1}
spec:
  domain:
    resources: {requests: {memory: 1Gi}}
`)
	memory := func(ratio string) uint64 {
		cfg := uniform(1, "best-effort", "")
		cfg.KubeVirtOverheadRatio = ratio
		a := mustNew(t, cfg)
		pod, err := kubevirt.LauncherPodWithOptions(vmi, kubeVirtOptions(a.cfg))
		if err != nil {
			t.Fatal(err)
		}
		return uint64(pod.Spec.Containers[0].Resources.Requests.Memory().Value())
	}
	plain, doubled := memory(""), memory("2")
	if doubled <= plain {
		t.Fatalf("ratio 2 gives %d bytes, no more than %d without it", doubled, plain)
	}
	cfg := uniform(1, "best-effort", "")
	cfg.KubeVirtOverheadRatio = "0.5"
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "0.5") {
		t.Fatalf("ratio 0.5 accepted: %v", err)
	}
}
