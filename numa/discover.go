package numa

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// warnings collects what discovery had to assume, in the order found.
type warnings struct{ list []string }

func (w *warnings) add(format string, args ...any) {
	w.list = append(w.list, fmt.Sprintf(format, args...))
}

// Discover reads the machine's topology. A malformed file is an error that
// names the path and its content; missing information is filled in by a
// fixed rule and reported in Topology.Warnings.
func (f FS) Discover() (*Topology, error) {
	tree, err := fsutil.OpenRoot(f.root)
	if err != nil {
		return nil, fmt.Errorf("%s is not a sysfs root: %w", f.root, err)
	}
	defer tree.Close()
	f.tree = tree
	return f.discover()
}

// discover is Discover once the tree is open. It reads in phases, each
// adding to the warnings in the order a reader of sysfs meets them: the
// CPUs and their topology, the nodes and the CPUs each holds, the
// sockets and cores built from both, then the PCI devices.
func (f FS) discover() (*Topology, error) {
	w := &warnings{}
	var err error
	if f.cpus, err = f.readCPUBound(); err != nil {
		return nil, err
	}
	cs, err := f.readCPUSets(w)
	if err != nil {
		return nil, err
	}
	t := &Topology{
		Online: cs.online, Offline: cs.offline, Possible: cs.possible, Present: cs.present,
		Sockets: []Socket{}, Nodes: []Node{}, CPUs: []CPU{},
	}
	topo, err := f.readCPUTopologies(cs, w)
	if err != nil {
		return nil, err
	}
	nodeOf, err := f.discoverNodes(t, cs, w)
	if err != nil {
		return nil, err
	}
	t.CPUs = listCPUs(cs, topo, nodeOf)
	t.Sockets = buildSockets(t.CPUs, topo, w)
	if t.PCI, err = f.readPCIDevices(); err != nil {
		return nil, err
	}
	checkPCINodes(t, w)

	t.Warnings = w.list
	if t.Warnings == nil {
		t.Warnings = []string{}
	}
	return t, nil
}

// readCPUTopologies reads the package and core of each present CPU, by
// its id. cpu/present bounds the CPUs, as in lscpu: SPARC and ppc64 keep
// cpuN directories for possible CPUs that are not present.
func (f FS) readCPUTopologies(cs cpuSets, w *warnings) (map[int]cpuTopology, error) {
	ids := cs.present.IDs()
	if beyond := bitmask.NewCPUSet(cs.dirs...).Difference(cs.present); !beyond.IsEmpty() {
		w.add("%s: directories for CPUs %s beyond %s/present (%s): they are not CPUs", cpuDir, beyond, cpuDir, cs.present)
	}
	topo := make(map[int]cpuTopology, len(ids))
	var noTopology []int
	for _, id := range ids {
		ct, ok, err := f.readCPUTopology(id, cs.online.Has(id), w)
		if err != nil {
			return nil, err
		}
		if ok {
			topo[id] = ct
		} else if cs.online.Has(id) {
			noTopology = append(noTopology, id)
		}
	}
	if len(noTopology) > 0 {
		w.add("online CPUs %s have no physical_package_id or core_id (nor both thread_siblings and core_siblings to build them from): they belong to no socket or core", bitmask.NewCPUSet(noTopology...))
	}
	idsFromMasks(ids, topo, w)
	return topo, nil
}

// discoverNodes sets t.Nodes, their memory, hugepages and distances, and
// returns the node of each CPU a node holds. A kernel without NUMA has no
// node directories: the machine is then one node 0 with every online CPU.
func (f FS) discoverNodes(t *Topology, cs cpuSets, w *warnings) (map[int]int, error) {
	raw, ok, err := f.readNodes(w)
	if err != nil {
		return nil, err
	}
	if !ok {
		w.add("%s has no nodeN directories (kernel without NUMA?): assuming one node 0 with every online CPU and memory of unknown size (reported as 0)", nodeDir)
		raw = []rawNode{{id: 0, cpus: cs.online, hugepages: []Hugepages{}, distances: []int{10}}}
	}
	nodeOf := assignCPUs(raw, cs, w)
	t.Nodes = buildNodes(raw, nodeOf, cs.online)
	if !ok {
		// Every machine has memory; without node files its size is unknown.
		t.Nodes[0].Kind = NodeCPUAndMemory
		t.Nodes[0].Distances = []int{10}
		return nodeOf, nil
	}
	if err := f.checkNodeFiles(t.Nodes, w); err != nil {
		return nil, err
	}
	if err := f.fillDistances(t, raw, w); err != nil {
		return nil, err
	}
	return nodeOf, nil
}

// listCPUs lists every present CPU, ascending, with its core, socket and
// node; -1 where discovery found none.
func listCPUs(cs cpuSets, topo map[int]cpuTopology, nodeOf map[int]int) []CPU {
	ids := cs.present.IDs()
	cpus := make([]CPU, 0, len(ids))
	for _, id := range ids {
		c := CPU{ID: id, Core: -1, Socket: -1, Node: -1, Online: cs.online.Has(id)}
		if ct, ok := topo[id]; ok {
			c.Core, c.Socket = ct.core, ct.pkg
		}
		if n, ok := nodeOf[id]; ok {
			c.Node = n
		}
		cpus = append(cpus, c)
	}
	return cpus
}

// checkPCINodes warns about PCI devices whose numa_node names a node the
// machine does not have: their locality, as firmware reports it, cannot
// be trusted.
func checkPCINodes(t *Topology, w *warnings) {
	nodeIDs := t.NodeIDs()
	var foreign []string
	for _, d := range t.PCI {
		if d.Node >= 0 && !nodeIDs.Has(d.Node) {
			foreign = append(foreign, d.Address+"→"+strconv.Itoa(d.Node))
		}
	}
	if len(foreign) > 0 {
		w.add("PCI devices name nodes that do not exist: %s", strings.Join(foreign, ", "))
	}
}

// assignCPUs maps each CPU that a node lists to one node. Firmware can list
// a CPU in several nodes (all CPUs in all 8 nodes on one machine); the CPU
// then goes to the lowest node id listing it, as lscpu does, so that node
// CPU sets never overlap.
func assignCPUs(raw []rawNode, cs cpuSets, w *warnings) map[int]int {
	nodeOf := map[int]int{}
	var shared bitmask.CPUSet
	var sharers bitmask.NodeSet
	for _, n := range raw { // ascending by id: the first claim wins
		// Only present CPUs (bounded by their directories): a node's
		// cpulist may claim any range.
		for _, cpu := range n.cpus.Intersect(cs.present).IDs() {
			if first, taken := nodeOf[cpu]; taken {
				shared = shared.Union(bitmask.NewCPUSet(cpu))
				sharers = sharers.Add(first).Add(n.id)
				continue
			}
			nodeOf[cpu] = n.id
		}
		if missing := n.cpus.Difference(cs.present); !missing.IsEmpty() {
			w.add("node%d lists CPUs %s that are not present; ignoring them", n.id, missing)
		}
	}
	if !shared.IsEmpty() {
		w.add("CPUs %s are listed by several nodes (%s): each is assigned to the lowest node listing it", shared, sharers)
	}
	for cpu := range nodeOf {
		if !cs.present.Has(cpu) {
			delete(nodeOf, cpu)
		}
	}
	var orphans []int
	for _, cpu := range cs.online.IDs() {
		if _, ok := nodeOf[cpu]; !ok {
			orphans = append(orphans, cpu)
		}
	}
	if len(orphans) > 0 {
		w.add("online CPUs %s are listed by no node (their node is offline or missing): they belong to no node", bitmask.NewCPUSet(orphans...))
	}
	return nodeOf
}

func buildNodes(raw []rawNode, nodeOf map[int]int, online bitmask.CPUSet) []Node {
	byNode := map[int][]int{}
	for cpu, n := range nodeOf {
		if online.Has(cpu) {
			byNode[n] = append(byNode[n], cpu)
		}
	}
	nodes := make([]Node, 0, len(raw))
	for _, r := range raw {
		n := Node{ID: r.id, CPUs: bitmask.NewCPUSet(byNode[r.id]...), Hugepages: r.hugepages}
		if r.meminfo != nil {
			n.MemoryBytes, n.FreeBytes = r.meminfo["MemTotal"], r.meminfo["MemFree"]
		}
		n.Kind = kindOf(!n.CPUs.IsEmpty(), n.MemoryBytes > 0)
		nodes = append(nodes, n)
	}
	return nodes
}

func kindOf(hasCPU, hasMemory bool) NodeKind {
	switch {
	case hasCPU && hasMemory:
		return NodeCPUAndMemory
	case hasCPU:
		return NodeCPUOnly
	case hasMemory:
		return NodeMemoryOnly
	default:
		return NodeEmpty
	}
}

// checkNodeFiles compares node/has_cpu and node/has_memory with what the
// nodes themselves say. The nodes' own files win: has_cpu is empty on some
// kernels and missing on others.
func (f FS) checkNodeFiles(nodes []Node, w *warnings) error {
	var withCPU, withMemory bitmask.NodeSet
	for _, n := range nodes {
		if !n.CPUs.IsEmpty() {
			withCPU = withCPU.Add(n.ID)
		}
		if n.MemoryBytes > 0 {
			withMemory = withMemory.Add(n.ID)
		}
	}
	for _, c := range []struct {
		file    string
		derived bitmask.NodeSet
		what    string
	}{{"has_cpu", withCPU, "online CPUs"}, {"has_memory", withMemory, "memory"}} {
		path := f.path(nodeDir, c.file)
		set, ok, err := f.readNodeList(path)
		if err != nil {
			return err
		}
		if ok && set != c.derived {
			w.add("%s/%s says %q but the nodes with %s are %q; using the nodes' own files", nodeDir, c.file, set, c.what, c.derived)
		}
	}
	return nil
}

// fillDistances maps each node's distance line onto Topology.Nodes. The
// kernel writes one value per online node, ascending; edited dumps keep
// the line of the original machine, which then matches node/possible.
func (f FS) fillDistances(t *Topology, raw []rawNode, w *warnings) error {
	dirs := t.NodeIDs()
	orders := []struct {
		name string
		set  bitmask.NodeSet
	}{{"the node directories", dirs}}
	for _, file := range []string{"online", "possible"} {
		set, ok, err := f.readNodeList(f.path(nodeDir, file))
		if err != nil {
			return err
		}
		if ok && set != dirs {
			orders = append(orders, struct {
				name string
				set  bitmask.NodeSet
			}{nodeDir + "/" + file, set})
		}
	}
	for i, r := range raw {
		node := &t.Nodes[i]
		if r.distances == nil {
			w.add("node%d: distance is missing: distances unknown", r.id)
			continue
		}
		var ids []int
		for j, o := range orders {
			if o.set.Len() == len(r.distances) {
				ids = o.set.IDs()
				if j > 0 {
					w.add("node%d: distance has %d values for %d node directories; reading them as distances to %s (%s)", r.id, len(r.distances), dirs.Len(), o.name, o.set)
				}
				break
			}
		}
		if ids == nil {
			return invalid(f.path(nodeDir, "node"+strconv.Itoa(r.id), "distance"), r.distText,
				fmt.Errorf("%d values, but there are %d nodes (%s)", len(r.distances), dirs.Len(), dirs))
		}
		node.Distances = make([]int, len(t.Nodes))
		for k, other := range t.Nodes {
			node.Distances[k] = -1
			if pos := slices.Index(ids, other.ID); pos >= 0 {
				node.Distances[k] = r.distances[pos]
			}
		}
	}
	checkDistances(t, w)
	return nil
}

// checkDistances warns about matrices that defeat locality: a remote
// distance not above the local one (buggy firmware writes all 10s).
func checkDistances(t *Topology, w *warnings) {
	var flat []string
	for i, n := range t.Nodes {
		if len(n.Distances) != len(t.Nodes) {
			continue
		}
		for k, d := range n.Distances {
			if k != i && d >= 0 && d <= n.Distances[i] {
				flat = append(flat, fmt.Sprintf("%d→%d", n.ID, t.Nodes[k].ID))
			}
		}
	}
	if len(flat) > 0 {
		if len(flat) > 8 {
			flat = append(flat[:8], fmt.Sprintf("and %d more", len(flat)-8))
		}
		w.add("remote distances not above the local one (%s): the firmware's distance table is unreliable", strings.Join(flat, ", "))
	}
}

// buildSockets groups online CPUs with topology into sockets by
// physical_package_id and into cores by thread siblings: (package,
// core_id) is not unique on multi-die packages without die_id nor on
// Bulldozer, where two cores share a core_id.
func buildSockets(cpus []CPU, topo map[int]cpuTopology, w *warnings) []Socket {
	type coreKey struct {
		pkg      int
		siblings string
	}
	cores := map[coreKey]*Core{}
	var order []coreKey
	noSiblings := false
	for _, c := range cpus {
		ct, ok := topo[c.ID]
		if !c.Online || !ok {
			continue
		}
		key := coreKey{pkg: ct.pkg, siblings: ct.siblings.String()}
		if !ct.hasSiblings {
			noSiblings = true
			key.siblings = "core_id " + strconv.Itoa(ct.core)
		}
		core, seen := cores[key]
		if !seen {
			core = &Core{CoreID: ct.core, Socket: ct.pkg, Node: c.Node}
			cores[key] = core
			order = append(order, key)
		} else if core.Node != c.Node {
			w.add("core of CPUs %s spans nodes %d and %d; the core counts as node %d", core.CPUs, core.Node, c.Node, core.Node)
		}
		core.CPUs = core.CPUs.Union(bitmask.NewCPUSet(c.ID))
	}
	var unknownPkg []int
	for _, key := range order {
		if key.pkg < 0 {
			unknownPkg = append(unknownPkg, cores[key].CPUs.IDs()...)
		}
	}
	if len(unknownPkg) > 0 {
		// idsFromMasks numbers them as lscpu does when every CPU has a
		// core_siblings mask; here some CPU has none.
		w.add("physical_package_id is -1 (unknown, as on PowerVM) for CPUs %s and not every CPU has core_siblings to number sockets by as lscpu does: they form socket -1", bitmask.NewCPUSet(unknownPkg...))
	}
	if noSiblings {
		w.add("no thread_siblings_list or thread_siblings: grouping CPUs into cores by (physical_package_id, core_id), which merges cores of multi-die packages")
	}

	byID := map[int]*Socket{}
	var socketIDs []int
	for _, key := range order { // ascending by lowest CPU
		core := cores[key]
		s, ok := byID[core.Socket]
		if !ok {
			s = &Socket{ID: core.Socket, Cores: []Core{}}
			byID[core.Socket] = s
			socketIDs = append(socketIDs, core.Socket)
		}
		s.CPUs = s.CPUs.Union(core.CPUs)
		if core.Node >= 0 {
			s.Nodes = s.Nodes.Add(core.Node)
		}
		s.Cores = append(s.Cores, *core)
	}
	slices.Sort(socketIDs)
	sockets := make([]Socket, 0, len(socketIDs))
	for _, id := range socketIDs {
		sockets = append(sockets, *byID[id])
	}
	return sockets
}
