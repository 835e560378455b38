package planner

import (
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// spec describes a synthetic machine for tests that need shapes the real
// fixtures lack. CPUs are numbered as Linux does: first threads of every
// core, then their siblings.
type spec struct {
	sockets, nodesPerSocket, coresPerNode, threads int
	memOnly                                        int    // CPU-less nodes added after the CPU nodes
	nodeIDs                                        []int  // sparse node ids (CPU nodes then memory-only); default 0..n-1
	socketIDs                                      []int  // physical_package_id per socket; default 0..n-1
	offline                                        []int  // offline CPU ids
	mem                                            uint64 // bytes per node; default 16Gi
	pageSizes                                      []uint64
	// near[k] is the CPU node index memory-only node k is nearest to
	// (distance 20, others 40); default all 80 (a tie).
	near []int
}

func gi(n uint64) uint64 { return n << 30 }

var seedSpec = spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 4, threads: 1}

func synth(s spec) *numa.Topology {
	if s.threads == 0 {
		s.threads = 1
	}
	if s.mem == 0 {
		s.mem = gi(16)
	}
	if s.pageSizes == nil {
		s.pageSizes = []uint64{2 << 20, 1 << 30}
	}
	cpuNodes := s.sockets * s.nodesPerSocket
	nNodes := cpuNodes + s.memOnly
	nodeID := func(k int) int {
		if k < len(s.nodeIDs) {
			return s.nodeIDs[k]
		}
		return k
	}
	socketID := func(k int) int {
		if k < len(s.socketIDs) {
			return s.socketIDs[k]
		}
		return k
	}
	offline := bitmask.NewCPUSet(s.offline...)
	totalCores := cpuNodes * s.coresPerNode
	t := &numa.Topology{Warnings: []string{}}
	nodeCPUs := make([][]int, nNodes)
	for sk := 0; sk < s.sockets; sk++ {
		sock := numa.Socket{ID: socketID(sk)}
		var sockCPUs []int
		for nk := 0; nk < s.nodesPerSocket; nk++ {
			k := sk*s.nodesPerSocket + nk
			sock.Nodes = sock.Nodes.Add(nodeID(k))
			for c := 0; c < s.coresPerNode; c++ {
				core := k*s.coresPerNode + c
				var ids []int
				for th := 0; th < s.threads; th++ {
					ids = append(ids, th*totalCores+core)
				}
				sock.Cores = append(sock.Cores, numa.Core{CoreID: c, Socket: sock.ID, Node: nodeID(k), CPUs: bitmask.NewCPUSet(ids...)})
				nodeCPUs[k] = append(nodeCPUs[k], ids...)
				sockCPUs = append(sockCPUs, ids...)
				for _, id := range ids {
					t.CPUs = append(t.CPUs, numa.CPU{ID: id, Core: c, Socket: sock.ID, Node: nodeID(k), Online: !offline.Has(id)})
				}
			}
		}
		sock.CPUs = bitmask.NewCPUSet(sockCPUs...)
		t.Sockets = append(t.Sockets, sock)
	}
	for k := 0; k < nNodes; k++ {
		n := numa.Node{ID: nodeID(k), CPUs: bitmask.NewCPUSet(nodeCPUs[k]...), MemoryBytes: s.mem, FreeBytes: s.mem, Kind: numa.NodeCPUAndMemory}
		if k >= cpuNodes {
			n.Kind = numa.NodeMemoryOnly
		}
		for _, ps := range s.pageSizes {
			n.Hugepages = append(n.Hugepages, numa.Hugepages{PageSize: ps})
		}
		for j := 0; j < nNodes; j++ {
			n.Distances = append(n.Distances, distance(s, cpuNodes, k, j))
		}
		t.Nodes = append(t.Nodes, n)
	}
	// Nodes ascending by id, as discovery returns them.
	for i := 1; i < len(t.Nodes); i++ {
		for j := i; j > 0 && t.Nodes[j].ID < t.Nodes[j-1].ID; j-- {
			t.Nodes[j], t.Nodes[j-1] = t.Nodes[j-1], t.Nodes[j]
		}
	}
	// Distances follow Topology.Nodes order: rebuild after sorting.
	order := make([]int, nNodes) // position → k
	for pos, n := range t.Nodes {
		for k := 0; k < nNodes; k++ {
			if nodeID(k) == n.ID {
				order[pos] = k
			}
		}
	}
	for pos := range t.Nodes {
		t.Nodes[pos].Distances = t.Nodes[pos].Distances[:0]
		for pos2 := range t.Nodes {
			t.Nodes[pos].Distances = append(t.Nodes[pos].Distances, distance(s, cpuNodes, order[pos], order[pos2]))
		}
	}
	// CPUs ascending by id.
	for i := 1; i < len(t.CPUs); i++ {
		for j := i; j > 0 && t.CPUs[j].ID < t.CPUs[j-1].ID; j-- {
			t.CPUs[j], t.CPUs[j-1] = t.CPUs[j-1], t.CPUs[j]
		}
	}
	var all []int
	for _, c := range t.CPUs {
		all = append(all, c.ID)
	}
	t.Possible = bitmask.NewCPUSet(all...)
	t.Present = t.Possible
	t.Offline = offline.Intersect(t.Possible)
	t.Online = t.Possible.Difference(offline)
	return t
}

// distance between node indexes a and b (not ids).
func distance(s spec, cpuNodes, a, b int) int {
	switch {
	case a == b:
		return 10
	case a < cpuNodes && b < cpuNodes:
		if a/s.nodesPerSocket == b/s.nodesPerSocket {
			return 11
		}
		return 21
	}
	memNode, other := a, b
	if a < cpuNodes {
		memNode, other = b, a
	}
	k := memNode - cpuNodes
	if other >= cpuNodes || k >= len(s.near) {
		return 80
	}
	if s.near[k] == other {
		return 20
	}
	return 40
}
