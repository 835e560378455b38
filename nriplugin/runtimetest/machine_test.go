package runtimetest

// The machine the tests run on, what they need of it, and the images.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/nriplugin"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// RealbinEnv names the folder of test/realbin/build.sh's binaries.
const RealbinEnv = "NUMA_PARTITION_REALBIN"

// logsEnv, when set, shows containerd's and the allocator's logs after
// every test (they are shown after a failure anyway).
const logsEnv = "NUMA_PARTITION_RUNTIMETEST_LOGS"

const (
	runcPath      = "/usr/sbin/runc"
	pauseImage    = "e2e.local/pause:1"
	workloadImage = "e2e.local/workload:1"
	gi            = int64(1) << 30
	mi            = int64(1) << 20
	// The allocator's view of each NUMA node's memory (its config, not the
	// machine's: the tests never use that much): 4Gi, 1Gi of node 0's
	// reserved, so no node holds 5Gi.
	nodeMemory   = 4 * gi
	reservedMemo = 1 * gi
)

// machine is what the tests place on: the CPUs and memory nodes this
// process may use, by physical core.
type machine struct {
	cpus    nriplugin.CPUTopology
	nodes   []int // with pod CPUs, ascending
	threads int   // CPUs per core (the most any core has)
	all     bitmask.CPUSet
	first   bitmask.CPUSet  // the core an exclusive container gets first
	mems    bitmask.NodeSet // this process's memory nodes: an unpinned container's
}

// requirements skips the test, loudly, unless this machine can run a
// real containerd; it returns the folder of its binaries.
func requirements(t testing.TB) (realbin string, m machine) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: the NRI plugin's tests against a real containerd need root (containerd, runc, cgroups); run as root (CI does)")
	}
	realbin = os.Getenv(RealbinEnv)
	if realbin == "" {
		t.Skip("SKIPPED LOUDLY: " + RealbinEnv + " is not set, so the NRI plugin was NOT tested against a real containerd; " +
			"build the binaries with test/realbin/build.sh (10-15 min cold) and set " + RealbinEnv + " to the folder it prints " +
			"(`make test` does when ~/.cache/numa-partition/bin/<key>/ exists; .ci/run builds it first)")
	}
	for _, b := range []string{"containerd", "containerd-shim-runc-v2", "ctr"} {
		if fi, err := os.Stat(filepath.Join(realbin, b)); err != nil || fi.Mode()&0o111 == 0 {
			t.Skipf("SKIPPED LOUDLY: %s=%s has no executable %s (run test/realbin/build.sh and use the folder it prints)", RealbinEnv, realbin, b)
		}
	}
	if _, err := os.Stat(runcPath); err != nil {
		t.Skipf("SKIPPED LOUDLY: no runc at %s, so the NRI plugin was NOT tested against a real containerd; apt-get install runc (.ci/run does)", runcPath)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("SKIPPED LOUDLY: no go command to build the test images (test/images/build.sh)")
	}
	m = discoverMachine(t)
	if len(m.cpus.Cores) < 2 {
		t.Skipf("SKIPPED LOUDLY: the tests need 2 physical cores (one exclusive, one shared); this process may use %s", m.all)
	}
	return realbin, m
}

// discoverMachine reads the CPU topology from /sys, restricted to the
// CPUs and memory nodes this process may use.
func discoverMachine(t testing.TB) machine {
	t.Helper()
	topo, err := numa.NewFS("/sys").Discover()
	require.NoError(t, err, "discovering the machine's topology")
	var affinity unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &affinity))
	status, err := procStatus(os.Getpid())
	require.NoError(t, err)
	mems, err := bitmask.ParseNodeList(status.mems)
	require.NoError(t, err)
	m := machine{mems: mems}
	for _, s := range topo.Sockets {
		for _, c := range s.Cores {
			var cpus bitmask.CPUSet
			for _, id := range c.CPUs.IDs() {
				if affinity.IsSet(id) {
					cpus = cpus.Union(bitmask.NewCPUSet(id))
				}
			}
			if cpus.IsEmpty() || c.Node < 0 || !mems.Has(c.Node) {
				continue
			}
			m.cpus.Cores = append(m.cpus.Cores, nriplugin.Core{Node: c.Node, CPUs: cpus})
			m.all = m.all.Union(cpus)
			m.threads = max(m.threads, cpus.Len())
		}
	}
	seen := map[int]bool{}
	for _, c := range m.cpus.Cores {
		if !seen[c.Node] {
			seen[c.Node] = true
			m.nodes = append(m.nodes, c.Node)
		}
	}
	sort.Ints(m.nodes)
	m.cpus.Distances = map[int]map[int]int{}
	for _, a := range m.nodes {
		m.cpus.Distances[a] = map[int]int{}
		for _, b := range m.nodes {
			if d, ok := topo.Distance(a, b); ok {
				m.cpus.Distances[a][b] = d
			}
		}
	}
	// The plugin hands out whole cores lowest node and core first.
	for _, c := range m.cpus.Cores {
		if c.Node == m.nodes[0] && (m.first.IsEmpty() || c.CPUs.IDs()[0] < m.first.IDs()[0]) {
			m.first = c.CPUs
		}
	}
	return m
}

// config is the allocator's configuration for the machine's nodes.
func (m machine) config(policy string) allocator.Config {
	cfg := allocator.Config{Policy: policy, Scope: "container", Distances: m.cpus.Distances}
	for i, id := range m.nodes {
		n := allocator.NodeResources{ID: id, Memory: uint64(nodeMemory), Reserved: map[allocator.ResourceName]uint64{}}
		if i == 0 {
			n.Reserved[allocator.ResourceMemory] = uint64(reservedMemo) // the Static policy needs some
		}
		cfg.Nodes = append(cfg.Nodes, n)
	}
	return cfg
}

// images builds the e2e's pause and workload images once per test binary.
var images struct {
	once sync.Once
	dir  string
	err  error
}

func buildImages(t testing.TB) string {
	t.Helper()
	images.once.Do(func() {
		dir, err := os.MkdirTemp("", "nrirt-images-")
		if err != nil {
			images.err = err
			return
		}
		images.dir = dir
		out, err := exec.Command(filepath.Join(repoRoot(t), "test/images/build.sh"), dir).CombinedOutput()
		if err != nil {
			images.err = fmt.Errorf("test/images/build.sh: %w: %s", err, out)
		}
	})
	require.NoError(t, images.err)
	return images.dir
}

func repoRoot(t testing.TB) string {
	wd, err := os.Getwd()
	require.NoError(t, err)
	return filepath.Join(wd, "../..")
}
