package numa

import (
	"testing"

	"github.com/numa-partition/numa-partition/numa/numatest"
)

// TestDiscoverBigHosts: numatest's big hosts discover as the machines
// they describe, without a warning: every CPU online in its socket and
// node, SMT siblings paired, CPU-less nodes memory-only (or empty), the
// distance matrix whole. (The allocator's shapes of 16 and 64 nodes are
// discovered by the planner's and the daemon's tests.)
func TestDiscoverBigHosts(t *testing.T) {
	for _, s := range append([]numatest.Shape{numatest.GB200MIGOff}, numatest.BigHosts...) {
		t.Run(s.Name, func(t *testing.T) {
			topo, err := NewFS(s.WriteTemp(t)).Discover()
			if err != nil {
				t.Fatal(err)
			}
			if len(topo.Warnings) != 0 {
				t.Errorf("warnings: %q", topo.Warnings)
			}
			if len(topo.CPUs) != s.CPUs() || topo.Online.Len() != s.CPUs() || len(topo.Sockets) != s.Sockets || len(topo.Nodes) != s.Nodes() {
				t.Fatalf("%d CPUs (%s online), %d sockets, %d nodes; want %d, %d, %d", len(topo.CPUs), topo.Online, len(topo.Sockets), len(topo.Nodes), s.CPUs(), s.Sockets, s.Nodes())
			}
			kinds := map[NodeKind]int{}
			for _, n := range topo.Nodes {
				kinds[n.Kind]++
				if len(n.Distances) != s.Nodes() || len(n.Hugepages) != len(s.PageSizes) {
					t.Errorf("node %d: %d distances, %d page sizes", n.ID, len(n.Distances), len(n.Hugepages))
				}
			}
			empty := 0
			if s.EmptyEvery > 1 {
				empty = s.MemoryNodes - s.MemoryNodes/s.EmptyEvery
			}
			if kinds[NodeCPUAndMemory] != s.CPUNodes() || kinds[NodeMemoryOnly] != s.MemoryNodes-empty || kinds[NodeEmpty] != empty {
				t.Errorf("node kinds %v", kinds)
			}
			for _, sock := range topo.Sockets {
				if len(sock.Cores) != s.CoresPerSocket || sock.Nodes.Len() != s.NodesPerSocket {
					t.Errorf("socket %d: %d cores, nodes %s", sock.ID, len(sock.Cores), sock.Nodes)
				}
				for _, c := range sock.Cores {
					if c.CPUs.Len() != max(s.ThreadsPerCore, 1) {
						t.Errorf("socket %d core %d: CPUs %s", sock.ID, c.CoreID, c.CPUs)
					}
				}
			}
		})
	}
}
