package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/partition/policy/memorymanager"
)

func TestExampleScenario(t *testing.T) {
	sc, dir, err := Load("../../../examples/simulate/two-socket.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		action, pod string
		admitted    bool
		nodes       string
		reason      string
	}
	wants := []want{
		{"add", "telco/dpdk", true, "0", ""},
		{"add", "default/web", true, "", ""},
		{"addVMI", "vms/virt-launcher-vm1", true, "0", ""},
		{"add", "batch/analytics", false, "", "failed to get the default NUMA affinity"},
		{"add", "ml/inference", true, "1", ""},
	}
	for i, w := range wants {
		o := rep.Outcomes[i]
		d := o.Decision
		if o.Action != w.action || d.Pod != w.pod || d.Admitted != w.admitted || !strings.Contains(d.Reason, w.reason) {
			t.Errorf("event %d: %s %+v", i, o.Action, d)
		}
		if w.nodes != "" && d.Containers[len(d.Containers)-1].NUMANodes.String() != w.nodes {
			t.Errorf("event %d: nodes %v", i, d.Containers)
		}
	}
	if vm := rep.Outcomes[2].Decision.Containers[0]; vm.Memory["memory"] != 723591169 || vm.Memory["hugepages-2Mi"] != 4<<30 {
		t.Errorf("VMI: %+v", vm)
	}
	if o := rep.Outcomes[5]; o.Action != "delete" || o.Released == nil || !*o.Released {
		t.Errorf("delete: %+v", o)
	}
	if err := memorymanager.CheckInvariants(rep.Machine); err != nil {
		t.Fatal(err)
	}
	if got := rep.Machine[0].MemoryMap["memory"].Reserved; got != 723591169 {
		t.Errorf("node 0 reserved after the delete: %d", got)
	}
	if len(rep.Allocations) != 3 || rep.Rejected() != 1 {
		t.Errorf("%d allocations, %d rejected", len(rep.Allocations), rep.Rejected())
	}
}

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSysfsMachine(t *testing.T) {
	root, err := filepath.Abs("../../../testdata/sysfs/hwloc-16amd64-8n2c/sys")
	if err != nil {
		t.Fatal(err)
	}
	p := write(t, `
machine: {sysfs: `+root+`, numaNodes: [0, 1, 2, 3]}
reserved: {0: {memory: 100Mi}}
policy: restricted
options: {prefer-closest-numa-nodes: "true"}
events:
  - add: {metadata: {name: a}, spec: {containers: [{name: c, resources: {limits: {cpu: "1", memory: 100Mi}}}]}}
`)
	sc, dir, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Machine) != 4 || len(rep.Config.Distances) != 4 || rep.Config.Distances[0][0] == 0 {
		t.Fatalf("machine %d nodes, distances %v", len(rep.Machine), rep.Config.Distances)
	}
	if d := rep.Outcomes[0].Decision; !d.Admitted || d.Containers[0].NUMANodes.Len() == 0 {
		t.Fatalf("%+v", d)
	}
}

func TestBadScenarios(t *testing.T) {
	base := "machine: {nodes: [{id: 0, memory: 8Gi}]}\nreserved: {0: {memory: 1Gi}}\npolicy: best-effort\n"
	for name, body := range map[string]string{
		"unknown key":      base + "polcy: x\n",
		"no machine":       "policy: none\n",
		"bad memory":       "machine: {nodes: [{id: 0, memory: lots}]}\n",
		"reserved node":    base + "reserved: {3: {memory: 1Gi}}\n",
		"reserved name":    "machine: {nodes: [{id: 0, memory: 8Gi}]}\nreserved: {0: {cpu: 1Gi}}\n",
		"bad option":       base + "options: {foo: bar}\n",
		"two actions":      base + "events: [{delete: a, addVMI: {kind: x}}]\n",
		"no action":        base + "events: [{}]\n",
		"pod without name": base + "events: [{add: {spec: {containers: [{name: c}]}}}]\n",
		"both machines":    "machine: {sysfs: /x, nodes: [{id: 0, memory: 8Gi}]}\n",
		"bad hugepages":    "machine: {nodes: [{id: 0, memory: 8Gi, hugepages: {big: 1Gi}}]}\n",
	} {
		sc, dir, err := Load(write(t, body))
		if err == nil {
			_, err = Run(sc, dir)
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzScenario: any input is either refused with an error or played
// without panics, keeping the MemoryTable invariants.
func FuzzScenario(f *testing.F) {
	example, err := os.ReadFile("../../../examples/simulate/two-socket.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte("machine: {nodes: [{id: 0, memory: 8Gi}]}\nreserved: {0: {memory: 1Gi}}\npolicy: best-effort\n"))
	// #38: the bounds on node memory, page sizes and distances.
	f.Add([]byte("machine: {nodes: [{id: 0, memory: 8Ei}]}\nreserved: {0: {memory: 1Gi}}\npolicy: best-effort\n"))
	f.Add([]byte("machine: {nodes: [{id: 0, memory: 8Gi, hugepages: {3Ki: 3Ki}}]}\nreserved: {0: {memory: 1Gi}}\n"))
	f.Add([]byte("machine: {nodes: [{id: 0, memory: 8Gi}, {id: 1, memory: 8Gi}], distances: {0: {1: -5}}}\nreserved: {0: {memory: 1Gi}}\npolicy: best-effort\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(data)
		if err != nil || sc.Machine.Sysfs != "" {
			return
		}
		rep, err := Run(sc, ".")
		if err != nil {
			return
		}
		if err := memorymanager.CheckInvariants(rep.Machine); err != nil {
			t.Fatal(err)
		}
	})
}

// Issue 38 items 8 and 9: simulate took nodes of 8 Ei, negative
// distances and pages of 3 Ki, and reported a YAML file's errors as
// "error unmarshaling JSON". Each is refused naming the field and what
// is allowed, in the file's own words.
func TestScenarioBoundsAndWords_Issue38(t *testing.T) {
	const reserved = "reserved: {0: {memory: 1Gi}}\npolicy: best-effort\n"
	for body, want := range map[string]string{
		"machine: {nodes: [{id: 0, memory: 8Ei}]}\n" + reserved:                                                       "nodes: node 0: memory 9223372036854775807: at most 4Pi, all that 52-bit physical addresses reach",
		"machine: {nodes: [{id: 0, memory: 8Gi, hugepages: {3Ki: 3Ki}}]}\n" + reserved:                                "nodes: node 0: hugepages of 3Ki: a page size is a power of two of at least 4Ki",
		"machine: {nodes: [{id: 0, memory: 8Gi}, {id: 1, memory: 8Gi}], distances: {0: {0: 10, 1: -5}}}\n" + reserved: "distances[0][1]: -5: allowed are 0-255 (the kernel's NUMA distances, 10 for a node itself)",
		"machine: {nodes: [{id: 0, memory: 8Gi}]}\n" + reserved + "polcy: x\n":                                        `not a scenario: unknown field "polcy"`,
		"events: x\n":  "events: a string is not allowed here, expected []scenario.Event",
		"machine: [\n": "not valid YAML or JSON: yaml: line 1: did not find expected node content",
	} {
		sc, dir, err := Load(write(t, body))
		if err == nil {
			_, err = Run(sc, dir)
		}
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%q: got %v, want …%s", body, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "unmarshaling JSON") {
			t.Errorf("%q: %v speaks of JSON decoding", body, err)
		}
	}
}
