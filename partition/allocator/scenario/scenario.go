// Package scenario runs capacity-planning scenarios through the allocator:
// a machine (sysfs dump or inline nodes), reservations, Topology Manager
// settings and a sequence of pod/VMI add and delete events. It backs
// `numa-partition simulate`; the format is documented in docs/allocator.md.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// Scenario is the file format (YAML or JSON).
type Scenario struct {
	Machine Machine `json:"machine"`
	// Reserved is kubelet's reservedMemory: node id -> resource -> quantity.
	Reserved map[int]map[string]string `json:"reserved"`
	// Policy, Scope, Options are kubelet's topologyManagerPolicy,
	// topologyManagerScope and topologyManagerPolicyOptions.
	Policy           string            `json:"policy"`
	Scope            string            `json:"scope"`
	Options          map[string]string `json:"options,omitempty"`
	TieBreak         string            `json:"tieBreak,omitempty"`
	KubeVirtOverhead string            `json:"kubevirtOverhead,omitempty"`
	Events           []Event           `json:"events"`
}

// Machine is either a sysfs dump (Sysfs, optionally restricted to
// NUMANodes) or inline Nodes.
type Machine struct {
	// Sysfs is a sysfs root (e.g. testdata/sysfs/<machine>/sys), relative
	// to the scenario file.
	Sysfs     string              `json:"sysfs,omitempty"`
	NUMANodes []int               `json:"numaNodes,omitempty"`
	Nodes     []Node              `json:"nodes,omitempty"`
	Distances map[int]map[int]int `json:"distances,omitempty"`
}

// Node is one inline NUMA node.
type Node struct {
	ID     int    `json:"id"`
	Memory string `json:"memory"`
	// Hugepages: page size -> total ("2Mi": "4Gi").
	Hugepages map[string]string `json:"hugepages,omitempty"`
}

// Event is exactly one of Add (a Pod manifest), AddVMI (a
// VirtualMachineInstance manifest) or Delete (a pod uid or
// namespace/name). Hints are other providers' hints for Add/AddVMI.
type Event struct {
	Add    *corev1.Pod      `json:"add,omitempty"`
	AddVMI json.RawMessage  `json:"addVMI,omitempty"`
	Delete string           `json:"delete,omitempty"`
	Hints  *allocator.Hints `json:"hints,omitempty"`
}

// Outcome is the result of one event.
type Outcome struct {
	Event    int                 `json:"event"` // index in events
	Action   string              `json:"action"`
	Decision *allocator.Decision `json:"decision,omitempty"`
	Deleted  string              `json:"deleted,omitempty"`
	Released *bool               `json:"released,omitempty"`
}

// Report is what simulate prints.
type Report struct {
	Config      allocator.Config            `json:"config"`
	Outcomes    []Outcome                   `json:"outcomes"`
	Machine     map[int]allocator.NodeState `json:"machine"`
	Allocations []allocator.Allocation      `json:"allocations"`
}

// maxScenarioFile bounds a scenario (simulate): a machine and a list of
// pods; room for thousands of them.
const maxScenarioFile = 16 << 20

// Load reads a scenario file; "-" is stdin. Unknown keys are errors.
func Load(path string) (*Scenario, string, error) {
	var data []byte
	var err error
	dir := filepath.Dir(path)
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(os.Stdin, maxScenarioFile+1))
		if err == nil && len(data) > maxScenarioFile {
			err = fmt.Errorf("stdin is over %d bytes: %w", maxScenarioFile, fsutil.ErrTooLarge)
		}
		dir = "."
	} else {
		data, err = fsutil.ReadFileBounded(path, maxScenarioFile)
	}
	if err != nil {
		return nil, "", fmt.Errorf("scenario: %w", err)
	}
	sc, err := Parse(data)
	if err != nil {
		return nil, "", fmt.Errorf("scenario %s: %w", path, err)
	}
	return sc, dir, nil
}

// Parse reads a scenario from YAML or JSON; unknown keys are errors.
func Parse(data []byte) (*Scenario, error) {
	var sc Scenario
	// YAML is read as the JSON it stands for; errors are worded for the
	// file (#38: a YAML file's said "error unmarshaling JSON").
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML or JSON: %s", strings.TrimPrefix(err.Error(), "error converting YAML to JSON: "))
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("%s: a %s is not allowed here, expected %s", typeErr.Field, typeErr.Value, typeErr.Type)
		}
		return nil, fmt.Errorf("not a scenario: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return &sc, nil
}

// Config builds the allocator configuration; dir resolves a relative sysfs path.
// The machine is a sysfs dump or inline nodes, never both: each has its
// own reader (sysfsNodes, inlineNodes), and kubelet's reservedMemory is
// laid over either (reserve). On an error the config built so far is
// returned with it.
func (sc *Scenario) Config(dir string) (allocator.Config, error) {
	cfg := allocator.Config{Policy: sc.Policy, Scope: sc.Scope, TieBreak: sc.TieBreak, KubeVirtOverhead: sc.KubeVirtOverhead, Distances: sc.Machine.Distances}
	opts, err := topologymanager.NewPolicyOptions(sc.Options)
	if err != nil {
		return cfg, fmt.Errorf("options: %w", err)
	}
	cfg.PolicyOptions = opts
	m := sc.Machine
	switch {
	case m.Sysfs != "" && len(m.Nodes) > 0:
		return cfg, errors.New("machine: give either sysfs or nodes, not both")
	case m.Sysfs != "":
		err = m.sysfsNodes(&cfg, dir)
	case len(m.Nodes) > 0:
		err = m.inlineNodes(&cfg)
	default:
		return cfg, errors.New("machine: give sysfs (a sysfs dump) or nodes (inline)")
	}
	if err != nil {
		return cfg, err
	}
	if err := sc.reserve(&cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// sysfsNodes adds to cfg the nodes of the sysfs dump (relative to dir),
// or only those of NUMANodes, with their memory and hugepage pools as the
// machine has them; their distances are the dump's unless the scenario
// gives its own.
func (m Machine) sysfsNodes(cfg *allocator.Config, dir string) error {
	root := m.Sysfs
	if !filepath.IsAbs(root) {
		root = filepath.Join(dir, root)
	}
	topo, err := numa.NewFS(root).Discover()
	if err != nil {
		return fmt.Errorf("machine.sysfs %s: %w", root, err)
	}
	dist := map[int]map[int]int{}
	for _, n := range topo.Nodes {
		if len(m.NUMANodes) > 0 && !slices.Contains(m.NUMANodes, n.ID) {
			continue
		}
		cfg.Nodes = append(cfg.Nodes, discoveredNode(n))
		dist[n.ID] = map[int]int{}
		for i, d := range n.Distances {
			if i < len(topo.Nodes) {
				dist[n.ID][topo.Nodes[i].ID] = d
			}
		}
	}
	// A node the scenario names must be there: a typo would otherwise
	// simulate a smaller machine without a word.
	for _, id := range m.NUMANodes {
		if _, ok := dist[id]; !ok {
			return fmt.Errorf("machine.numaNodes: node %d is not in %s", id, root)
		}
	}
	if cfg.Distances == nil {
		cfg.Distances = dist
	}
	return nil
}

// discoveredNode is node n's memory and those of its hugepage pools that
// hold pages, as the dump has them (an empty pool is left out).
func discoveredNode(n numa.Node) allocator.NodeResources {
	nr := allocator.NodeResources{ID: n.ID, Memory: n.MemoryBytes, Hugepages: map[uint64]uint64{}}
	for _, hp := range n.Hugepages {
		if hp.Total > 0 {
			nr.Hugepages[hp.PageSize] = hp.Total * hp.PageSize
		}
	}
	return nr
}

// inlineNodes adds to cfg the scenario's own nodes, in its order; each
// error names the node's index and key in the file.
func (m Machine) inlineNodes(cfg *allocator.Config) error {
	for i, n := range m.Nodes {
		nr, err := inlineNode(i, n)
		if err != nil {
			return err
		}
		cfg.Nodes = append(cfg.Nodes, nr)
	}
	return nil
}

// inlineNode is machine.nodes[i]: its memory and its hugepages, page
// size -> total, as quantities ("2Mi": "4Gi").
func inlineNode(i int, n Node) (allocator.NodeResources, error) {
	mem, err := units.ParseBytes(n.Memory)
	if err != nil {
		return allocator.NodeResources{}, fmt.Errorf("machine.nodes[%d].memory: %w", i, err)
	}
	nr := allocator.NodeResources{ID: n.ID, Memory: mem, Hugepages: map[uint64]uint64{}}
	for size, total := range n.Hugepages {
		ps, err := units.ParseBytes(size)
		if err != nil || ps == 0 {
			return allocator.NodeResources{}, fmt.Errorf("machine.nodes[%d].hugepages: page size %q: want a size like 2Mi or 1Gi", i, size)
		}
		tb, err := units.ParseBytes(total)
		if err != nil {
			return allocator.NodeResources{}, fmt.Errorf("machine.nodes[%d].hugepages[%s]: %w", i, size, err)
		}
		nr.Hugepages[ps] = tb
	}
	return nr, nil
}

// reserve sets kubelet's reservedMemory of the scenario on cfg's nodes,
// each resource named as kubelet names it, so that a reservation written
// hugepages-2048Ki counts against the pool hugepages-2Mi.
func (sc *Scenario) reserve(cfg *allocator.Config) error {
	for id, res := range sc.Reserved {
		k := slices.IndexFunc(cfg.Nodes, func(n allocator.NodeResources) bool { return n.ID == id })
		if k < 0 {
			return fmt.Errorf("reserved: node %d is not in the machine", id)
		}
		cfg.Nodes[k].Reserved = map[allocator.ResourceName]uint64{}
		for name, q := range res {
			b, err := units.ParseBytes(q)
			if err != nil {
				return fmt.Errorf("reserved[%d][%s]: %w", id, name, err)
			}
			if name != string(allocator.ResourceMemory) {
				// canonical hugepage spelling: hugepages-2048Ki -> hugepages-2Mi
				size, err := units.ParseBytes(trimHugepages(name))
				if err != nil || size == 0 {
					return fmt.Errorf("reserved[%d]: resource %q: allowed are memory and hugepages-<size>", id, name)
				}
				name = units.HugepageResource(size)
			}
			cfg.Nodes[k].Reserved[allocator.ResourceName(name)] = b
		}
	}
	return nil
}

func trimHugepages(name string) string {
	const p = "hugepages-"
	if len(name) > len(p) && name[:len(p)] == p {
		return name[len(p):]
	}
	return "not a hugepage resource"
}

// Run plays the events. A rejected pod is an outcome, not an error;
// errors are invalid scenarios and name the event.
func Run(sc *Scenario, dir string) (*Report, error) {
	cfg, err := sc.Config(dir)
	if err != nil {
		return nil, err
	}
	return RunWith(cfg, sc)
}

// OnlyEvents refuses a scenario that sets more than its events (and the
// allocator's tie break or KubeVirt overhead): what a plan's partition
// decides (the machine, reservations, policy, scope and options), when
// the scenario is played against one (simulate --partition).
func (sc *Scenario) OnlyEvents() error {
	var set []string
	if sc.Machine.Sysfs != "" || len(sc.Machine.Nodes) > 0 || len(sc.Machine.NUMANodes) > 0 || len(sc.Machine.Distances) > 0 {
		set = append(set, "machine")
	}
	if len(sc.Reserved) > 0 {
		set = append(set, "reserved")
	}
	if sc.Policy != "" {
		set = append(set, "policy")
	}
	if sc.Scope != "" {
		set = append(set, "scope")
	}
	if len(sc.Options) > 0 {
		set = append(set, "options")
	}
	if len(set) > 0 {
		return fmt.Errorf("it sets %s, which the plan's partition decides: give events only (and tieBreak, kubevirtOverhead)", strings.Join(set, ", "))
	}
	return nil
}

// RunWith plays sc's events against an allocator of cfg (a plan's
// partition, as its daemon decides: fromplan.AllocatorConfig), with the
// scenario's tie break and KubeVirt overhead when it sets them.
func RunWith(cfg allocator.Config, sc *Scenario) (*Report, error) {
	if sc.TieBreak != "" {
		cfg.TieBreak = sc.TieBreak
	}
	if sc.KubeVirtOverhead != "" {
		cfg.KubeVirtOverhead = sc.KubeVirtOverhead
	}
	a, err := allocator.New(cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{Config: a.Config(), Outcomes: []Outcome{}}
	byName := map[string]types.UID{}
	for i, ev := range sc.Events {
		n := 0
		for _, set := range []bool{ev.Add != nil, len(ev.AddVMI) > 0, ev.Delete != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("events[%d]: give exactly one of add, addVMI, delete", i)
		}
		var hints allocator.Hints
		if ev.Hints != nil {
			hints = *ev.Hints
		}
		switch {
		case ev.Add != nil:
			pod := ev.Add.DeepCopy()
			if pod.Name == "" {
				return nil, fmt.Errorf("events[%d].add: metadata.name is empty", i)
			}
			if pod.Namespace == "" {
				pod.Namespace = "default"
			}
			if pod.UID == "" {
				pod.UID = types.UID(pod.Namespace + "/" + pod.Name)
			}
			d, err := a.AdmitWithHints(pod, hints)
			if err != nil {
				return nil, fmt.Errorf("events[%d].add: %w", i, err)
			}
			byName[d.Pod] = d.PodUID
			rep.Outcomes = append(rep.Outcomes, Outcome{Event: i, Action: "add", Decision: &d})
		case len(ev.AddVMI) > 0:
			manifest, err := withUID(ev.AddVMI)
			if err != nil {
				return nil, fmt.Errorf("events[%d].addVMI: %w", i, err)
			}
			d, err := a.AdmitVMIWithHints(manifest, hints)
			if err != nil {
				return nil, fmt.Errorf("events[%d].addVMI: %w", i, err)
			}
			byName[d.Pod] = d.PodUID
			rep.Outcomes = append(rep.Outcomes, Outcome{Event: i, Action: "addVMI", Decision: &d})
		default:
			uid := types.UID(ev.Delete)
			if u, ok := byName[ev.Delete]; ok {
				uid = u
			}
			ok, err := a.Release(uid)
			if err != nil {
				return nil, fmt.Errorf("events[%d].delete: %w", i, err)
			}
			rep.Outcomes = append(rep.Outcomes, Outcome{Event: i, Action: "delete", Deleted: ev.Delete, Released: &ok})
		}
	}
	st := a.State()
	rep.Machine, rep.Allocations = st.Machine, st.Allocations
	return rep, nil
}

// withUID gives a VMI without metadata.uid the uid "namespace/name".
func withUID(raw json.RawMessage) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		return nil, errors.New("metadata: missing")
	}
	if uid, _ := meta["uid"].(string); uid == "" {
		ns, _ := meta["namespace"].(string)
		if ns == "" {
			ns = "default"
			meta["namespace"] = ns
		}
		name, _ := meta["name"].(string)
		meta["uid"] = ns + "/" + name
	}
	return json.Marshal(m)
}

// Rejected counts the rejected admissions.
func (r *Report) Rejected() int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Decision != nil && !o.Decision.Admitted {
			n++
		}
	}
	return n
}
