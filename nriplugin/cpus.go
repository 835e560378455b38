package nriplugin

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// CPUTopology is the partition's pod CPUs as the CPU pool needs them.
type CPUTopology struct {
	// Cores are the pod CPUs grouped by physical core (SMT siblings),
	// each with its NUMA node.
	Cores []Core
	// Distances between the partition's nodes (for masks beyond 8 nodes).
	Distances map[int]map[int]int
}

// Core is one physical core's pod CPUs.
type Core struct {
	Node int
	CPUs bitmask.CPUSet
}

// cpuPool hands out exclusive whole cores (SMT siblings together, as
// kubelet's static CPU Manager with full-pcpus-only) and keeps the rest as
// the shared pool every other container runs on. Its state is the
// runtime's: Synchronize rebuilds it from the containers' cpusets.
type cpuPool struct {
	cores     []Core
	cpus      bitmask.CPUSet            // every pod CPU: the cores' union
	nodes     []int                     // ascending
	threads   int                       // CPUs per core (the most any core has)
	exclusive map[string]bitmask.CPUSet // container id -> its cores' CPUs
	distances map[int]map[int]int
	// nearest[i] are the nodes by distance from nodes[i] (itself first,
	// ties by id): the order hints grow in beyond 8 nodes, made once.
	nearest [][]int
}

func newCPUPool(t CPUTopology) (*cpuPool, error) {
	p := &cpuPool{exclusive: map[string]bitmask.CPUSet{}, distances: t.Distances}
	seen := map[int]bool{}
	for _, c := range t.Cores {
		if c.CPUs.IsEmpty() {
			continue
		}
		if !p.cpus.Intersect(c.CPUs).IsEmpty() {
			return nil, fmt.Errorf("CPUs %s are in two cores", p.cpus.Intersect(c.CPUs))
		}
		p.cpus = p.cpus.Union(c.CPUs)
		p.cores = append(p.cores, c)
		p.threads = max(p.threads, c.CPUs.Len())
		if !seen[c.Node] {
			seen[c.Node] = true
			p.nodes = append(p.nodes, c.Node)
		}
	}
	if len(p.cores) == 0 {
		return nil, fmt.Errorf("the partition has no CPUs for pods")
	}
	sort.Ints(p.nodes)
	for _, from := range p.nodes {
		order := append([]int(nil), p.nodes...)
		sort.SliceStable(order, func(i, j int) bool { return p.distance(from, order[i]) < p.distance(from, order[j]) })
		p.nearest = append(p.nearest, order)
	}
	sort.SliceStable(p.cores, func(i, j int) bool {
		if p.cores[i].Node != p.cores[j].Node {
			return p.cores[i].Node < p.cores[j].Node
		}
		return p.cores[i].CPUs.IDs()[0] < p.cores[j].CPUs.IDs()[0]
	})
	return p, nil
}

func (p *cpuPool) taken() bitmask.CPUSet {
	var s bitmask.CPUSet
	for _, cpus := range p.exclusive {
		s = s.Union(cpus)
	}
	return s
}

// shared is the pool of the containers without exclusive CPUs.
func (p *cpuPool) shared() bitmask.CPUSet { return p.cpus.Difference(p.taken()) }

// freeCores are the whole cores on nodes that no container holds.
func (p *cpuPool) freeCores(nodes bitmask.NodeSet) []Core {
	taken := p.taken()
	var out []Core
	for _, c := range p.cores {
		if nodes.Has(c.Node) && c.CPUs.Intersect(taken).IsEmpty() {
			out = append(out, c)
		}
	}
	return out
}

// coresFor is how many whole cores n CPUs take, or an error when n is not
// a whole number of cores (kubelet's SMTAlignmentError).
func (p *cpuPool) coresFor(n int) (int, error) {
	if n%p.threads != 0 {
		return 0, fmt.Errorf("SMTAlignmentError: %d CPUs are not a whole number of cores of %d CPUs (exclusive CPUs are whole cores)", n, p.threads)
	}
	return n / p.threads, nil
}

// hints are the CPU Manager's topology hints for n exclusive CPUs: every
// node mask with enough free whole cores, preferred when it has as few
// nodes as the fewest that could hold n CPUs at all (kubelet's
// generateCPUTopologyHints). Up to 8 nodes every mask is tried, as
// kubelet does; beyond, where kubelet's 2^n masks stop being affordable,
// each node grown by its nearest neighbours until its free cores suffice
// (at most one mask per node).
func (p *cpuPool) hints(n int) (topologymanager.ProviderHints, error) {
	cores, err := p.coresFor(n)
	if err != nil {
		return nil, err
	}
	perNode, freePerNode := map[int]int{}, map[int]int{}
	for _, c := range p.cores {
		perNode[c.Node]++
	}
	for _, c := range p.freeCores(bitmask.NewNodeSet(p.nodes...)) {
		freePerNode[c.Node]++
	}
	count := func(m map[int]int, ids []int) (sum int) {
		for _, id := range ids {
			sum += m[id]
		}
		return sum
	}
	var hints []topologymanager.Hint
	minNodes := len(p.nodes) + 1
	add := func(ids []int) {
		if count(perNode, ids) >= cores {
			minNodes = min(minNodes, len(ids))
		}
		if count(freePerNode, ids) >= cores {
			m := bitmask.NewNodeSet(ids...)
			hints = append(hints, topologymanager.Hint{Affinity: &m})
		}
	}
	if len(p.nodes) <= 8 {
		for set := uint(1); set < 1<<len(p.nodes); set++ {
			var ids []int
			for x := set; x != 0; x &= x - 1 {
				ids = append(ids, p.nodes[bits.TrailingZeros(x)])
			}
			add(ids)
		}
	} else {
		seen := map[bitmask.NodeSet]bool{}
		for _, ids := range p.grown(freePerNode, cores) {
			if m := bitmask.NewNodeSet(ids...); !seen[m] {
				seen[m] = true
				add(ids)
			}
		}
	}
	for i := range hints {
		hints[i].Preferred = hints[i].Affinity.Len() == minNodes
	}
	return topologymanager.ProviderHints{"cpu": hints}, nil
}

// grown is, for every node, the nearest nodes to it (by distance, then
// id; itself first) that have free cores, until they have cores of them.
func (p *cpuPool) grown(free map[int]int, cores int) [][]int {
	var out [][]int
	for _, order := range p.nearest {
		var ids []int
		have := 0
		for _, id := range order {
			if free[id] == 0 {
				continue // adds nothing but distance
			}
			ids, have = append(ids, id), have+free[id]
			if have >= cores {
				out = append(out, ids)
				break
			}
		}
	}
	return out
}

func (p *cpuPool) distance(a, b int) int {
	if a == b {
		return 0
	}
	if d, ok := p.distances[a][b]; ok {
		return d
	}
	return 1 << 20
}

// take gives container id n CPUs as whole free cores on nodes, lowest
// node and core first; it leaves at least one core shared.
func (p *cpuPool) take(id string, n int, nodes bitmask.NodeSet) (bitmask.CPUSet, error) {
	if cpus, ok := p.exclusive[id]; ok {
		return cpus, nil
	}
	cores, err := p.coresFor(n)
	if err != nil {
		return bitmask.CPUSet{}, err
	}
	free := p.freeCores(nodes)
	if len(free) < cores {
		return bitmask.CPUSet{}, fmt.Errorf("not enough free cores on nodes %s: %d CPUs asked, %d free", nodes, n, len(free)*p.threads)
	}
	var got bitmask.CPUSet
	for _, c := range free[:cores] {
		got = got.Union(c.CPUs)
	}
	if p.shared().Difference(got).IsEmpty() {
		return bitmask.CPUSet{}, fmt.Errorf("%d exclusive CPUs would leave no CPU for the partition's shared pool (%s)", n, p.shared())
	}
	p.exclusive[id] = got
	return got, nil
}

// hold adds CPUs a running container already has to itself to holding id
// (Synchronize; a unit's holding collects its containers').
func (p *cpuPool) hold(id string, cpus bitmask.CPUSet) error {
	if overlap := p.taken().Intersect(cpus); !overlap.IsEmpty() {
		return fmt.Errorf("CPUs %s are another container's", overlap)
	}
	if extra := cpus.Difference(p.cpus); !extra.IsEmpty() {
		return fmt.Errorf("CPUs %s are not the partition's pod CPUs (%s)", extra, p.cpus)
	}
	p.exclusive[id] = p.exclusive[id].Union(cpus)
	return nil
}

// holds says whether container id has exclusive CPUs.
func (p *cpuPool) holds(id string) bool {
	_, ok := p.exclusive[id]
	return ok
}

// clear forgets every exclusive holding (Synchronize rebuilds them).
func (p *cpuPool) clear() { p.exclusive = map[string]bitmask.CPUSet{} }

// release frees a container's CPUs; false if it had none.
func (p *cpuPool) release(id string) bool {
	_, ok := p.exclusive[id]
	delete(p.exclusive, id)
	return ok
}

// extend adds n CPUs of whole free cores on nodes to holding id (a pod
// placed as one unit reserves its containers' CPUs together), leaving at
// least one core shared, as take does.
func (p *cpuPool) extend(id string, n int, nodes bitmask.NodeSet) error {
	if n == 0 {
		return nil
	}
	const scratch = "\x00extend"
	got, err := p.take(scratch, n, nodes)
	delete(p.exclusive, scratch)
	if err != nil {
		return err
	}
	p.exclusive[id] = p.exclusive[id].Union(got)
	return nil
}

// describe is what a refusal of n exclusive CPUs adds to its reason: the
// CPUs of free whole cores on each node, nodes of the same count
// together ("cpu: asked 4 exclusive, free 2 on node 0, 0 on node 1
// (whole cores of 2 CPUs; the shared pool keeps one)").
func (p *cpuPool) describe(n int) string {
	free := map[int]int{}
	for _, c := range p.freeCores(bitmask.NewNodeSet(p.nodes...)) {
		free[c.Node] += c.CPUs.Len()
	}
	var order []int
	nodes := map[int]bitmask.NodeSet{}
	for _, id := range p.nodes {
		if _, seen := nodes[free[id]]; !seen {
			order = append(order, free[id])
		}
		nodes[free[id]] = nodes[free[id]].Add(id)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cpu: asked %d exclusive, free ", n)
	for i, count := range order {
		if i > 0 {
			b.WriteString(", ")
		}
		if set := nodes[count]; set.Len() == 1 {
			fmt.Fprintf(&b, "%d on node %s", count, set)
		} else {
			fmt.Fprintf(&b, "%d on nodes %s", count, set)
		}
	}
	fmt.Fprintf(&b, " (whole cores of %d CPUs; the shared pool keeps one)", p.threads)
	return b.String()
}

// pick chooses n CPUs as whole cores of within, none of them in busy,
// lowest node and core first.
func (p *cpuPool) pick(within, busy bitmask.CPUSet, n int) (bitmask.CPUSet, error) {
	cores, err := p.coresFor(n)
	if err != nil {
		return bitmask.CPUSet{}, err
	}
	var got bitmask.CPUSet
	for _, c := range p.cores {
		if cores == 0 {
			break
		}
		if c.CPUs.IsSubsetOf(within) && !c.CPUs.Intersects(busy) {
			got = got.Union(c.CPUs)
			cores--
		}
	}
	if cores > 0 {
		return bitmask.CPUSet{}, fmt.Errorf("%d CPUs asked of %s, %d of them in use", n, within, within.Intersect(busy).Len())
	}
	return got, nil
}
