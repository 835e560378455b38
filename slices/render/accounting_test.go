package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/bundle"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/numa-partition/numa-partition/kubeletgen"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// machineFacts are the machine's totals, taken from the topology when the
// example has one (so the plan's own numbers are checked too).
type machineFacts struct {
	online bitmask.CPUSet
	// kubeletCPUs are the CPUs kubelet counts (cadvisor: online CPUs that
	// a node lists), from the topology when the example has one.
	kubeletCPUs bitmask.CPUSet
	nodeCPUs    map[int]bitmask.CPUSet // online CPUs each node lists
	total       map[int]uint64         // MemTotal per node
	hugepages   map[int]uint64         // planned hugepage bytes per node
	reserved    map[int]uint64         // what the host keeps on each partitioned node
	excluded    bitmask.NodeSet
}

func facts(t *testing.T, e example) (planner.Plan, machineFacts, bundle.Bundle) {
	plan, topo, b := e.render(t)
	f := machineFacts{online: plan.Host.OnlineCPUs, kubeletCPUs: plan.Host.OnlineCPUs, nodeCPUs: map[int]bitmask.CPUSet{},
		total: map[int]uint64{}, hugepages: map[int]uint64{}, reserved: map[int]uint64{}, excluded: plan.Host.ExcludedNodes}
	for _, p := range plan.Partitions {
		// Without a topology, the plan's word: a partition's CPUs and its
		// host-reserved ones are its nodes' (one node each in such plans).
		if ids := p.Nodes.IDs(); len(ids) == 1 {
			f.nodeCPUs[ids[0]] = p.CPUs.Union(p.HostReservedCPUs)
		}
	}
	add := func(ms []planner.NodeMemory, own bool) {
		for _, m := range ms {
			f.total[m.Node] = m.TotalBytes
			f.hugepages[m.Node] = kubeletgen.HugepageBytes(m)
			if own {
				f.reserved[m.Node] = m.ReservedBytes
			}
		}
	}
	for _, p := range plan.Partitions {
		add(p.Memory, true)
	}
	add(plan.Host.ExcludedMemory, false)
	if topo != nil {
		if !topo.Online.Equal(f.online) {
			t.Fatalf("plan online CPUs %s, machine %s", f.online, topo.Online)
		}
		f.kubeletCPUs = bitmask.CPUSet{}
		for _, n := range topo.Nodes {
			f.nodeCPUs[n.ID] = n.CPUs.Intersect(topo.Online)
			f.kubeletCPUs = f.kubeletCPUs.Union(f.nodeCPUs[n.ID])
		}
		for _, n := range topo.Nodes {
			if f.total[n.ID] != n.MemoryBytes {
				t.Fatalf("node %d: plan says %d bytes, machine %d", n.ID, f.total[n.ID], n.MemoryBytes)
			}
		}
		if len(f.total) != len(topo.Nodes) {
			t.Fatalf("plan describes %d nodes, machine has %d", len(f.total), len(topo.Nodes))
		}
	}
	return plan, f, b
}

func renderedConfig(t *testing.T, b bundle.Bundle, p planner.Partition) *kubeletv1beta1.KubeletConfiguration {
	t.Helper()
	path := rootRelative(p.Kubelet.ConfigPath)
	c, err := kubeletgen.Unmarshal([]byte(fileContent(t, b, path)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

func bytesOf(t *testing.T, s string) uint64 {
	t.Helper()
	b, err := units.ParseBytes(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kubeletOffer is what kubelet would compute from a rendered config on this
// machine: allocatable CPUs (as a set: reservedSystemCPUs' complement),
// allocatable memory, and the Static memory manager's per-node table.
type kubeletOffer struct {
	cpus          bitmask.CPUSet
	memory        int64
	nodeAlloc     map[int]int64
	reservedTotal uint64
}

// seenMachine is the machine as p's kubelet sees it: the NUMA nodes its
// kubelet unit leaves alone in /sys/devices/system/node before it starts
// (`view nodes --nodes`, read back from the rendered unit, independently
// of how render chose them) and MemTotal theirs, which the holder must
// then serve (`view hold --meminfo`); the whole machine when the unit
// leaves all.
func seenMachine(t *testing.T, f machineFacts, b bundle.Bundle, p planner.Partition) machineFacts {
	t.Helper()
	// A long command goes on over lines ending in " \".
	kubelet := strings.ReplaceAll(fileContent(t, b, unitPath(kubeletUnit(p.Name))), " \\\n    ", " ")
	// A partition on a shared runtime (runtime kind "shared") has no holder.
	holder, _ := renderedFile(b, unitPath(bundle.MountnsUnit(p.Name)))
	_, after, shown := strings.Cut(kubelet, " view nodes --nodes ")
	served := slices.Contains(holderArgs(holder, p.Slice), "--meminfo")
	if !shown {
		if served {
			t.Fatalf("%s: the holder serves a meminfo view, but its kubelet is shown every node", p.Name)
		}
		return f
	}
	list, _, _ := strings.Cut(after, "'")
	nodes, err := bitmask.ParseNodeList(strings.TrimSpace(list))
	if err != nil || !served || !strings.Contains(kubelet, "\nExecStartPre=") {
		t.Fatalf("%s: nodes %q shown (%v), meminfo served %v: the view must be whole\n%s", p.Name, list, err, served, kubelet)
	}
	seen := f
	seen.kubeletCPUs, seen.total = bitmask.CPUSet{}, map[int]uint64{}
	for _, n := range nodes.IDs() {
		seen.kubeletCPUs = seen.kubeletCPUs.Union(f.nodeCPUs[n])
		seen.total[n] = f.total[n]
	}
	return seen
}

// seenHugepages is the hugepage memory p's kubelet sees on each node: the
// machine's, except where the bundle binds a view file over a node's pool
// (read back from the rendered files, independently of how render chose
// them). The view's machine-wide files must add up to its node files.
func seenHugepages(t *testing.T, f machineFacts, b bundle.Bundle, p planner.Partition) map[int]uint64 {
	t.Helper()
	seen := map[int]uint64{}
	for n, h := range f.hugepages {
		seen[n] = h
	}
	viewed := map[int]bool{}
	nodeSum, globalSum := map[uint64]uint64{}, map[uint64]uint64{}
	prefix := hugepageViewDir(p.Name) + "/"
	for _, file := range b.Files {
		rel, ok := strings.CutPrefix(file.Path, prefix)
		if !ok {
			continue
		}
		count, err := strconv.ParseUint(strings.TrimSpace(string(file.Content)), 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", file.Path, err)
		}
		var node int
		var kb uint64
		if _, err := fmt.Sscanf(rel, "devices/system/node/node%d/hugepages/hugepages-%dkB/nr_hugepages", &node, &kb); err == nil {
			if !viewed[node] {
				viewed[node], seen[node] = true, 0
			}
			seen[node] += count * kb << 10
			nodeSum[kb] += count
		} else if _, err := fmt.Sscanf(rel, "kernel/mm/hugepages/hugepages-%dkB/nr_hugepages", &kb); err == nil {
			globalSum[kb] += count
		} else {
			t.Fatalf("%s: not a pool file kubelet reads", file.Path)
		}
	}
	for kb, n := range nodeSum {
		if globalSum[kb] != n {
			t.Fatalf("%s: the view shows %d pages of %dkB machine-wide but %d on its nodes", p.Name, globalSum[kb], kb, n)
		}
	}
	return seen
}

func kubeletSees(t *testing.T, f machineFacts, hugepages map[int]uint64, c *kubeletv1beta1.KubeletConfiguration) kubeletOffer {
	t.Helper()
	reserved, err := bitmask.ParseCPUList(c.ReservedSystemCPUs)
	if err != nil {
		t.Fatal(err)
	}
	if !reserved.IsSubsetOf(f.kubeletCPUs) {
		t.Fatalf("reservedSystemCPUs %s not within the CPUs kubelet counts %s (kubelet refuses: not a subset of online-cpus)", reserved, f.kubeletCPUs)
	}
	var memTotal, hugeTotal uint64
	for n, tot := range f.total {
		memTotal += tot
		hugeTotal += hugepages[n]
	}
	nodeAllocatable := bytesOf(t, c.KubeReserved["memory"]) + bytesOf(t, c.SystemReserved["memory"]) + bytesOf(t, c.EvictionHard["memory.available"])
	v := kubeletOffer{
		cpus:      f.kubeletCPUs.Difference(reserved),
		memory:    int64(memTotal) - int64(hugeTotal) - int64(nodeAllocatable),
		nodeAlloc: map[int]int64{},
	}
	byNode := map[int]uint64{}
	for _, r := range c.ReservedMemory {
		for name, q := range r.Limits {
			if name != corev1.ResourceMemory {
				t.Fatalf("reservedMemory node %d reserves %s: kubelet accepts no hugepages reservation here", r.NumaNode, name)
			}
			if q.Sign() <= 0 {
				t.Fatalf("reservedMemory node %d: zero or negative limit %s", r.NumaNode, q.String())
			}
			if _, known := f.total[int(r.NumaNode)]; !known {
				t.Fatalf("reservedMemory names node %d the machine does not have", r.NumaNode)
			}
			byNode[int(r.NumaNode)] += uint64(q.Value())
			v.reservedTotal += uint64(q.Value())
		}
	}
	if c.MemoryManagerPolicy != "Static" {
		// No memory manager (nri mode: the allocator places memory):
		// kubelet keeps no table per node and reads no reservedMemory.
		if len(c.ReservedMemory) != 0 {
			t.Fatalf("reservedMemory with memoryManagerPolicy %q", c.MemoryManagerPolicy)
		}
		return v
	}
	// Memory manager M2: per type, Σ reservedMemory = node allocatable
	// reservation.
	if v.reservedTotal != nodeAllocatable {
		t.Fatalf("Σ reservedMemory %d != kubeReserved+systemReserved+evictionHard %d: kubelet refuses to start", v.reservedTotal, nodeAllocatable)
	}
	// Memory manager M1: allocatable(n) = total − reserved − hugepages.
	for n, tot := range f.total {
		v.nodeAlloc[n] = int64(tot) - int64(byNode[n]) - int64(hugepages[n])
	}
	return v
}

// TestAllocatableAddsUp: for each example, what the partitions' kubelets
// offer adds up to the machine minus the host's reservation, CPU by CPU
// and node by node, with nothing offered twice.
func TestAllocatableAddsUp(t *testing.T) {
	for _, e := range examples {
		t.Run(e.name, func(t *testing.T) {
			plan, f, b := facts(t, e)
			var allCPUs bitmask.CPUSet
			var sumMemory int64
			offeredBy := map[int]string{}
			for _, p := range plan.Partitions {
				v := kubeletSees(t, seenMachine(t, f, b, p), seenHugepages(t, f, b, p), renderedConfig(t, b, p))
				if !v.cpus.Equal(p.CPUs) {
					t.Errorf("%s: kubelet offers CPUs %s, partition has %s", p.Name, v.cpus, p.CPUs)
				}
				if allCPUs.Intersects(v.cpus) {
					t.Errorf("%s: CPUs %s offered by another partition too", p.Name, allCPUs.Intersect(v.cpus))
				}
				allCPUs = allCPUs.Union(v.cpus)

				var perNode int64
				for n, a := range v.nodeAlloc {
					if a < 0 {
						t.Fatalf("%s: memory manager table of node %d underflows (%d)", p.Name, n, a)
					}
					if a > 0 {
						if !p.Nodes.Has(n) {
							t.Errorf("%s: memory manager offers %d bytes on foreign node %d", p.Name, a, n)
						}
						if other, dup := offeredBy[n]; dup {
							t.Errorf("node %d offered by %s and %s", n, other, p.Name)
						}
						offeredBy[n] = p.Name
					}
					perNode += a
				}
				// The Node's allocatable and the memory manager agree.
				if len(v.nodeAlloc) > 0 && perNode != v.memory {
					t.Errorf("%s: Node allocatable memory %d != Σ memory manager nodes %d", p.Name, v.memory, perNode)
				}
				var share int64
				for _, n := range p.Nodes.IDs() {
					share += int64(f.total[n]) - int64(f.hugepages[n]) - int64(f.reserved[n])
				}
				if v.memory != share {
					t.Errorf("%s: allocatable memory %d, partition's share %d", p.Name, v.memory, share)
				}
				sumMemory += v.memory
			}

			// CPUs of excluded nodes are nobody's; the plan does not list
			// them, so examples with excluded nodes only get the weaker
			// check below.
			excludedCPUs := f.online.Difference(allCPUs).Difference(plan.Host.ReservedCPUs)
			if plan.Host.ExcludedNodes.Len() == 0 && !excludedCPUs.IsEmpty() {
				t.Errorf("online CPUs %s are neither offered nor host-reserved", excludedCPUs)
			}
			if want := f.online.Len() - plan.Host.ReservedCPUs.Intersect(f.online).Len() - excludedCPUs.Len(); allCPUs.Len() != want {
				t.Errorf("Σ allocatable CPUs %d, machine minus host %d", allCPUs.Len(), want)
			}

			var machine, host int64
			for n, tot := range f.total {
				machine += int64(tot) - int64(f.hugepages[n])
				if f.excluded.Has(n) {
					host += int64(tot) - int64(f.hugepages[n])
				}
				host += int64(f.reserved[n])
			}
			if sumMemory != machine-host {
				t.Errorf("Σ allocatable memory %s, machine (without hugepages) minus host reservation %s",
					units.FormatBytes(uint64(sumMemory)), units.FormatBytes(uint64(machine-host)))
			}
			t.Logf("%d partitions: %d CPUs, %s of memory allocatable; host keeps CPUs %s and %s",
				len(plan.Partitions), allCPUs.Len(), units.FormatBytes(uint64(sumMemory)), plan.Host.ReservedCPUs, units.FormatBytes(uint64(host)))
		})
	}
}

// TestRenderedKubeletConfigsDecodeStrictly: every rendered
// KubeletConfiguration decodes with the official types and strict
// decoding, and decodes to exactly what kubeletgen built.
func TestRenderedKubeletConfigsDecodeStrictly(t *testing.T) {
	for _, e := range examples {
		plan, _, b := e.render(t)
		for i := range plan.Partitions {
			p := &plan.Partitions[i]
			got := renderedConfig(t, b, *p)
			want, err := kubeletgen.Config(&plan, p)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := fmt.Sprintf("%+v", normalize(got)), fmt.Sprintf("%+v", normalize(want)); g != w {
				t.Errorf("%s/%s: decoded config differs from the built one:\n got %s\nwant %s", e.name, p.Name, g, w)
			}
		}
	}
}

// normalize makes quantities comparable by value.
func normalize(c *kubeletv1beta1.KubeletConfiguration) *kubeletv1beta1.KubeletConfiguration {
	out := c.DeepCopy()
	for i := range out.ReservedMemory {
		for k, q := range out.ReservedMemory[i].Limits {
			out.ReservedMemory[i].Limits[k] = *resource.NewQuantity(q.Value(), resource.BinarySI)
		}
	}
	return out
}
