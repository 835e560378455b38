package memorymanager

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// ExactNodes is the largest partition for which hints are computed over
// every node set, exactly as kubelet does. It is kubelet's default
// max-allowable-numa-nodes. Larger partitions use the bounded search of
// bounded.go.
const ExactNodes = 8

// Container is what the static policy needs to know of one container.
type Container struct {
	Name     string
	Requests map[ResourceName]uint64 // memory and hugepages-* only
	// Init is true for init containers; Restartable for sidecars
	// (init containers with restartPolicy Always).
	Init, Restartable bool
}

func (c *Container) regularInit() bool { return c.Init && !c.Restartable }

// Pod is a Guaranteed pod as the static policy sees it.
type Pod struct {
	UID  string
	Init []Container
	App  []Container
}

// Containers returns init then app containers, kubelet's order.
func (p *Pod) Containers() []*Container {
	out := make([]*Container, 0, len(p.Init)+len(p.App))
	for i := range p.Init {
		out = append(out, &p.Init[i])
	}
	for i := range p.App {
		out = append(out, &p.App[i])
	}
	return out
}

// Static is the static policy with its state. Not safe for concurrent use.
type Static struct {
	m *machine
	// blocks: pod -> container -> blocks; order: pod -> container names in
	// allocation order, so release is deterministic.
	blocks map[string]map[string][]Block
	order  map[string][]string
	// reusable init-container memory of the current pod (M9): mask -> resource -> bytes.
	reusablePod string
	reusable    map[uint64]map[ResourceName]uint64
}

// NewStatic builds the initial Node Map (M1) after the static policy's
// configuration checks (M2).
func NewStatic(nodes []NodeResources) (*Static, error) {
	var reserved uint64
	for _, n := range nodes {
		reserved += n.Reserved[ResourceMemory]
	}
	if reserved == 0 {
		return nil, errors.New("the static memory manager policy needs reserved memory: set reserved \"memory\" on at least one node (kubelet's reservedMemory)")
	}
	m, err := newMachine(nodes)
	if err != nil {
		return nil, err
	}
	return &Static{m: m, blocks: map[string]map[string][]Block{}, order: map[string][]string{}}, nil
}

// NodeIDs returns the partition's node ids, ascending.
func (s *Static) NodeIDs() []int { return slices.Clone(s.m.ids) }

// Resources returns the resources with a table, sorted.
func (s *Static) Resources() []ResourceName { return slices.Clone(s.m.resources) }

// Machine exports the Node Map.
func (s *Static) Machine() map[int]NodeState { return s.m.export() }

// Blocks returns a copy of a pod's blocks by container.
func (s *Static) Blocks(podUID string) map[string][]Block {
	out := map[string][]Block{}
	for name, bs := range s.blocks[podUID] {
		out[name] = cloneBlocks(bs)
	}
	return out
}

// ContainerBlocks returns a copy of one container's blocks: what an
// admission reads after each container, without copying the whole pod's
// (which made a pod of n containers cost n²).
func (s *Static) ContainerBlocks(podUID, name string) []Block {
	return cloneBlocks(s.blocks[podUID][name])
}

func cloneBlocks(bs []Block) []Block {
	cp := make([]Block, len(bs))
	for i, b := range bs {
		cp[i] = Block{NUMAAffinity: slices.Clone(b.NUMAAffinity), Type: b.Type, Size: b.Size}
	}
	return cp
}

// Load is the reserved fraction of a node set's allocatable memory
// (all resources), the score of the "spread" tie-break.
func (s *Static) Load(set bitmask.NodeSet) float64 {
	var res, alloc uint64
	for i, id := range s.m.ids {
		if set.Has(id) {
			for _, t := range s.m.tables[i] {
				res += t.Reserved
				alloc += t.Allocatable
			}
		}
	}
	if alloc == 0 {
		return 0
	}
	return float64(res) / float64(alloc)
}

type hint struct {
	mask      uint64
	preferred bool
}

// request is a container's requests resolved to table columns; a
// resource the partition lacks has column -1 (capacity 0).
type request struct {
	cols  []int
	names []ResourceName
	sizes []uint64
}

func (s *Static) resolve(req map[ResourceName]uint64) request {
	var r request
	for name := range req {
		r.names = append(r.names, name)
	}
	slices.Sort(r.names)
	for _, name := range r.names {
		col, ok := s.m.resourceIndex(name)
		if !ok {
			col = -1
		}
		r.cols = append(r.cols, col)
		r.sizes = append(r.sizes, req[name])
	}
	return r
}

func (s *Static) sum(mask uint64, col int, free bool) uint64 {
	if col < 0 {
		return 0
	}
	var total uint64
	for x := mask; x != 0; x &= x - 1 {
		t := s.m.tables[bits.TrailingZeros64(x)][col]
		if free {
			total += t.Free
		} else {
			total += t.Allocatable
		}
	}
	return total
}

func (s *Static) allocatableFits(mask uint64, r request) bool {
	for i, col := range r.cols {
		if s.sum(mask, col, false) < r.sizes[i] {
			return false
		}
	}
	return true
}

// freeFits is M4 step 5: free plus the pod's reusable memory on this exact mask.
func (s *Static) freeFits(podUID string, mask uint64, r request) bool {
	for i, col := range r.cols {
		if s.sum(mask, col, true)+s.reusableFor(podUID, mask, r.names[i]) < r.sizes[i] {
			return false
		}
	}
	return true
}

// freeFitsNoReuse is kubelet's isAffinitySatisfyRequest (M8 step 2).
func (s *Static) freeFitsNoReuse(mask uint64, r request) bool {
	for i, col := range r.cols {
		if s.sum(mask, col, true) < r.sizes[i] {
			return false
		}
	}
	return true
}

// groupAllows is M4 steps 3 and 4 (the hint filter).
func (s *Static) groupAllows(mask uint64) bool {
	if bits.OnesCount64(mask) == 1 {
		return bits.OnesCount64(s.m.cells[bits.TrailingZeros64(mask)]) == 1
	}
	return !s.violates(mask)
}

// violates is kubelet's isAffinityViolatingNUMAAllocations (M8 step 3): a
// multi-node mask may only contain unused nodes or exactly one group.
// Single-node masks never violate here, unlike in the hint filter.
func (s *Static) violates(mask uint64) bool {
	if bits.OnesCount64(mask) == 1 {
		return false
	}
	for x := mask; x != 0; x &= x - 1 {
		i := bits.TrailingZeros64(x)
		if s.m.assignments[i] == 0 {
			continue
		}
		if bits.OnesCount64(s.m.cells[i]) == 1 || s.m.cells[i] != mask {
			return true
		}
	}
	return false
}

func (s *Static) reusableFor(podUID string, mask uint64, name ResourceName) uint64 {
	if s.reusablePod != podUID || s.reusable == nil {
		return 0
	}
	return s.reusable[mask][name]
}

// calcHints is kubelet's calculateHints: every admissible mask with
// preferred = (size == minAffinitySize). Empty when nothing fits (M5).
func (s *Static) calcHints(podUID string, r request) []hint {
	var masks []uint64
	var minSize int
	if len(s.m.ids) <= ExactNodes {
		masks, minSize = s.exactMasks(podUID, r)
	} else {
		masks, minSize = s.boundedMasks(podUID, r)
	}
	out := make([]hint, len(masks))
	for i, mask := range masks {
		out[i] = hint{mask: mask, preferred: bits.OnesCount64(mask) == minSize}
	}
	return out
}

func (s *Static) exactMasks(podUID string, r request) ([]uint64, int) {
	n := len(s.m.ids)
	minSize := n
	var masks []uint64
	for mask := uint64(1); mask < 1<<n; mask++ {
		if !s.allocatableFits(mask, r) {
			continue
		}
		if c := bits.OnesCount64(mask); c < minSize {
			minSize = c
		}
		if s.groupAllows(mask) && s.freeFits(podUID, mask, r) {
			masks = append(masks, mask)
		}
	}
	slices.SortFunc(masks, func(a, b uint64) int {
		if narrower(a, b) {
			return -1
		}
		return 1
	})
	return masks, minSize
}

func (s *Static) toProviderHints(hs []hint, req map[ResourceName]uint64) topologymanager.ProviderHints {
	out := topologymanager.ProviderHints{}
	if len(hs) == 0 {
		return out // M5: {} means "no preference" to the Topology Manager
	}
	list := make([]topologymanager.Hint, len(hs))
	sets := make([]bitmask.NodeSet, len(hs)) // one allocation for all masks
	for i, h := range hs {
		for x := h.mask; x != 0; x &= x - 1 {
			sets[i] = sets[i].Add(s.m.ids[bits.TrailingZeros64(x)])
		}
		list[i] = topologymanager.Hint{Affinity: &sets[i], Preferred: h.preferred}
	}
	for name := range req {
		out[string(name)] = list
	}
	return out
}

// ContainerHints is GetTopologyHints for a Guaranteed pod's container (M4, M6).
func (s *Static) ContainerHints(pod *Pod, c *Container) topologymanager.ProviderHints {
	if bs, ok := s.blocks[pod.UID][c.Name]; ok {
		return s.regenerate(bs, c.Requests)
	}
	return s.toProviderHints(s.calcHints(pod.UID, s.resolve(c.Requests)), c.Requests)
}

// PodHints is GetPodTopologyHints (M7).
func (s *Static) PodHints(pod *Pod) topologymanager.ProviderHints {
	req := PodRequests(pod)
	for _, c := range pod.Containers() {
		if bs, ok := s.blocks[pod.UID][c.Name]; ok {
			return s.regenerate(bs, req)
		}
	}
	return s.toProviderHints(s.calcHints(pod.UID, s.resolve(req)), req)
}

// regenerate is M6: an allocated container's hints are its blocks'
// affinity, preferred; nil when the blocks no longer match the request.
func (s *Static) regenerate(bs []Block, req map[ResourceName]uint64) topologymanager.ProviderHints {
	if len(bs) != len(req) {
		return nil
	}
	out := topologymanager.ProviderHints{}
	for _, b := range bs {
		size, ok := req[b.Type]
		if !ok || size != b.Size {
			return nil
		}
		set := bitmask.NewNodeSet(b.NUMAAffinity...)
		out[string(b.Type)] = append(out[string(b.Type)], topologymanager.Hint{Affinity: &set, Preferred: true})
	}
	return out
}

// PodRequests is M7: per resource, max(Σ app + Σ sidecars, max over regular
// init containers of (sidecars before it + its request)), only for
// resources some app container requests.
func PodRequests(pod *Pod) map[ResourceName]uint64 {
	out := map[ResourceName]uint64{}
	for _, c := range pod.App {
		for name, v := range c.Requests {
			out[name] += v
		}
	}
	sidecars := map[ResourceName]uint64{}
	initMax := map[ResourceName]uint64{}
	for _, c := range pod.Init {
		for name, v := range c.Requests {
			if c.Restartable {
				sidecars[name] += v
			} else if sidecars[name]+v > initMax[name] {
				initMax[name] = sidecars[name] + v
			}
		}
	}
	for name := range out {
		out[name] += sidecars[name]
		if initMax[name] > out[name] {
			out[name] = initMax[name]
		}
	}
	return out
}

// findBest is kubelet's findBestHint: preferred, then fewest nodes, then
// the numerically smallest mask.
func findBest(hs []hint) (hint, bool) {
	var best hint
	found := false
	for _, h := range hs {
		switch {
		case !found:
		case h.preferred && !best.preferred:
		case h.preferred == best.preferred && narrower(h.mask, best.mask):
		default:
			continue
		}
		best, found = h, true
	}
	return best, found
}

func narrower(a, b uint64) bool {
	if ca, cb := bits.OnesCount64(a), bits.OnesCount64(b); ca != cb {
		return ca < cb
	}
	return a < b
}

// Allocate is M8: pin a container's memory on the Topology Manager's hint.
func (s *Static) Allocate(pod *Pod, c *Container, tm topologymanager.Hint) error {
	if len(c.Requests) == 0 {
		return nil
	}
	if bs, ok := s.blocks[pod.UID][c.Name]; ok {
		s.updateReusable(pod, c, bs)
		return nil
	}
	r := s.resolve(c.Requests)
	best := hint{preferred: tm.Preferred}
	if tm.Affinity == nil {
		def, ok := findBest(s.calcHints(pod.UID, r))
		if !ok {
			return errors.New("[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available")
		}
		if !def.preferred && tm.Preferred {
			return errors.New("[memorymanager] failed to find the default preferred hint")
		}
		best = def
	} else {
		mask, err := s.m.maskOf(tm.Affinity.IDs())
		if err != nil {
			return fmt.Errorf("[memorymanager] topology hint %s: %w", tm.Affinity, err)
		}
		best.mask = mask
	}
	if !s.freeFitsNoReuse(best.mask, r) {
		var supersets []hint
		for _, h := range s.calcHints(pod.UID, r) {
			if h.mask&best.mask == best.mask {
				supersets = append(supersets, h)
			}
		}
		ext, ok := findBest(supersets)
		if !ok {
			return errors.New("[memorymanager] failed to find NUMA nodes to extend the current topology hint")
		}
		if !ext.preferred && best.preferred {
			return errors.New("[memorymanager] failed to find the extended preferred hint")
		}
		best = ext
	}
	if s.violates(best.mask) {
		return errors.New("[memorymanager] preferred hint violates NUMA node allocation")
	}
	ids := s.m.idsOf(best.mask)
	blocks := make([]Block, 0, len(r.names))
	for i, name := range r.names {
		size := r.sizes[i]
		blocks = append(blocks, Block{NUMAAffinity: slices.Clone(ids), Type: name, Size: size})
		charge := size - min(size, s.reusableFor(pod.UID, best.mask, name))
		s.charge(best.mask, r.cols[i], charge)
	}
	s.updateReusable(pod, c, blocks)
	s.setBlocks(pod.UID, c.Name, blocks)
	s.shrinkInitBlocks(pod, c, blocks)
	return nil
}

// charge is updateMachineState: +1 assignment per node of the mask (even
// for a zero charge), cells = mask, free taken in ascending node order.
func (s *Static) charge(mask uint64, col int, size uint64) {
	for x := mask; x != 0; x &= x - 1 {
		i := bits.TrailingZeros64(x)
		s.m.assignments[i]++
		s.m.cells[i] = mask
		if size == 0 || col < 0 {
			continue
		}
		t := &s.m.tables[i][col]
		take := min(t.Free, size)
		t.Free -= take
		t.Reserved += take
		size -= take
	}
}

func (s *Static) setBlocks(podUID, name string, bs []Block) {
	if s.blocks[podUID] == nil {
		s.blocks[podUID] = map[string][]Block{}
	}
	if _, ok := s.blocks[podUID][name]; !ok {
		s.order[podUID] = append(s.order[podUID], name)
	}
	s.blocks[podUID][name] = bs
}

// updateReusable is M9: regular init containers' blocks become reusable
// (max per mask and resource); other containers consume it.
func (s *Static) updateReusable(pod *Pod, c *Container, bs []Block) {
	if s.reusablePod != pod.UID {
		s.reusablePod, s.reusable = pod.UID, map[uint64]map[ResourceName]uint64{}
	}
	for _, b := range bs {
		mask, _ := s.m.maskOf(b.NUMAAffinity)
		if c.regularInit() {
			if s.reusable[mask] == nil {
				s.reusable[mask] = map[ResourceName]uint64{}
			}
			if b.Size > s.reusable[mask][b.Type] {
				s.reusable[mask][b.Type] = b.Size
			}
			continue
		}
		if v := s.reusable[mask][b.Type]; v != 0 {
			s.reusable[mask][b.Type] = v - min(v, b.Size)
		}
	}
}

// shrinkInitBlocks is updateInitContainersMemoryBlocks: earlier regular
// init containers' blocks on the same mask shrink by what c reused, so the
// pod's block sizes sum to what its containers hold in the tables.
func (s *Static) shrinkInitBlocks(pod *Pod, c *Container, bs []Block) {
	for _, b := range bs {
		size := b.Size
		for i := range pod.Init {
			ic := &pod.Init[i]
			if ic.Name == c.Name {
				break
			}
			if ic.Restartable {
				continue
			}
			ibs := s.blocks[pod.UID][ic.Name]
			for j := range ibs {
				ib := &ibs[j]
				if ib.Size == 0 || ib.Type != b.Type || !slices.Equal(ib.NUMAAffinity, b.NUMAAffinity) {
					continue
				}
				take := min(ib.Size, size)
				ib.Size -= take
				size -= take
			}
		}
	}
}

// RemoveContainer is M10: assignments-- per node of each block (cells
// reset when they reach 0), memory returned in ascending node order.
func (s *Static) RemoveContainer(podUID, name string) {
	bs, ok := s.blocks[podUID][name]
	if !ok {
		return
	}
	delete(s.blocks[podUID], name)
	s.order[podUID] = slices.DeleteFunc(s.order[podUID], func(n string) bool { return n == name })
	if len(s.blocks[podUID]) == 0 {
		delete(s.blocks, podUID)
		delete(s.order, podUID)
	}
	s.release(bs)
}

// release gives blocks' memory back to their nodes' tables.
func (s *Static) release(bs []Block) {
	for _, b := range bs {
		mask, _ := s.m.maskOf(b.NUMAAffinity)
		col, ok := s.m.resourceIndex(b.Type)
		size := b.Size
		for x := mask; x != 0; x &= x - 1 {
			i := bits.TrailingZeros64(x)
			s.m.assignments[i]--
			if s.m.assignments[i] == 0 {
				s.m.cells[i] = 1 << i
			}
			if size == 0 || !ok {
				continue
			}
			t := &s.m.tables[i][col]
			give := min(t.Reserved, size)
			t.Reserved -= give
			t.Free += give
			size -= give
		}
	}
}

// RemovePod releases every container of a pod, in allocation order.
func (s *Static) RemovePod(podUID string) {
	// Container by container in allocation order, as RemoveContainer
	// would, without its per-container search of the order (n² for a pod
	// of n containers).
	for _, name := range s.order[podUID] {
		if bs, ok := s.blocks[podUID][name]; ok {
			s.release(bs)
		}
	}
	delete(s.blocks, podUID)
	delete(s.order, podUID)
	if s.reusablePod == podUID {
		s.reusablePod, s.reusable = "", nil
	}
}

// StartContainers models kubelet's AddContainer for every container of an
// admitted pod: starting a container releases the regular init containers
// before it (M11), so a running pod keeps only app and sidecar memory.
func (s *Static) StartContainers(pod *Pod) {
	for _, c := range pod.Init {
		if !c.Restartable {
			s.RemoveContainer(pod.UID, c.Name)
		}
	}
}
