package nodeview

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// inOwnProcess runs the test named child in a process of its own mount
// namespace, with env; the child does nothing when run alone.
func inOwnProcess(t *testing.T, child string, env ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: mounting needs root (make test runs as root in CI)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: "+child)
}

// fakeNodes is a root whose NodesDir lists nodes 0-2 (node 2 without
// CPUs), each with a meminfo, a pool, its CPU lists and links, and a
// link named node3.
func fakeNodes(t *testing.T) string {
	dir := t.TempDir()
	cpus := map[string][]string{"0": {"0", "1"}, "1": {"2", "3"}}
	lists := map[string][2]string{"0": {"0-1", "00000000,00000003"}, "1": {"2-3", "00000000,0000000c"}, "2": {"", "00000000,00000000"}}
	for _, n := range []string{"0", "1", "2"} {
		node := NodesDir + "/node" + n
		write(t, dir, node+"/meminfo", "Node "+n+" MemTotal: 1024 kB\n")
		write(t, dir, node+"/hugepages/hugepages-2048kB/nr_hugepages", n+"\n")
		write(t, dir, node+"/cpulist", lists[n][0]+"\n")
		write(t, dir, node+"/cpumap", lists[n][1]+"\n")
		for _, c := range cpus[n] {
			require.NoError(t, os.Symlink("../../cpu/cpu"+c, filepath.Join(dir, node, "cpu"+c)))
		}
	}
	write(t, dir, NodesDir+"/online", "0-2\n")
	write(t, dir, NodesDir+"/has_cpu", "0-1\n")
	require.NoError(t, os.Symlink("node0", filepath.Join(dir, NodesDir, "node3")))
	return dir
}

// ShowNodes leaves the partition's node directories alone, read-only,
// with node lists cut to them; run again with other nodes it replaces its
// own view; the host's directory is untouched.
func TestShowNodes(t *testing.T) {
	dir := fakeNodes(t)
	inOwnProcess(t, "TestShowNodesChild", "NODEVIEW_NODES_ROOT="+dir)
	got, err := os.ReadDir(filepath.Join(dir, NodesDir))
	require.NoError(t, err)
	assert.Len(t, got, 6, "the host's directory keeps its entries")
}

func TestShowNodesChild(t *testing.T) {
	dir := os.Getenv("NODEVIEW_NODES_ROOT")
	if dir == "" {
		return
	}
	root, err := fsutil.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	nodesDir := filepath.Join(dir, NodesDir)
	ls := func() string {
		es, err := os.ReadDir(nodesDir)
		require.NoError(t, err)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		return strings.Join(names, " ")
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(nodesDir, rel))
		require.NoError(t, err)
		return string(b)
	}

	require.NoError(t, ShowNodes(root, bitmask.MustParseNodeList("1-2"), bitmask.CPUSet{}))
	assert.Equal(t, "has_cpu node1 node2 online", ls())
	assert.Equal(t, "1-2\n", read("online"))
	assert.Equal(t, "1\n", read("has_cpu"))
	assert.Equal(t, "Node 2 MemTotal: 1024 kB\n", read("node2/meminfo"))
	assert.Equal(t, "1\n", read("node1/hugepages/hugepages-2048kB/nr_hugepages"))
	for _, p := range []string{"node1/meminfo", "online", "node5"} {
		err := os.WriteFile(filepath.Join(nodesDir, p), []byte("x"), 0o644)
		assert.True(t, errors.Is(err, syscall.EROFS), "%s: a write is refused: %v", p, err)
	}

	// The next kubelet start, after a layout change.
	require.NoError(t, ShowNodes(root, bitmask.MustParseNodeList("0"), bitmask.CPUSet{}))
	assert.Equal(t, "has_cpu node0 online", ls())
	assert.Equal(t, "0\n", read("online"))

	// A static CPU Manager's partition with no host CPU on its nodes:
	// its first node with a CPU (node 1, not the CPU-less node 2) lists
	// the host's CPU 0 too, everything else of it as the kernel's.
	require.NoError(t, ShowNodes(root, bitmask.MustParseNodeList("1-2"), bitmask.MustParseCPUList("0")))
	assert.Equal(t, "has_cpu node1 node2 online", ls())
	lsNode := func(n string) string {
		es, err := os.ReadDir(filepath.Join(nodesDir, n))
		require.NoError(t, err)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return strings.Join(names, " ")
	}
	assert.Equal(t, "cpu0 cpu2 cpu3 cpulist cpumap hugepages meminfo", lsNode("node1"))
	assert.Equal(t, "cpulist cpumap hugepages meminfo", lsNode("node2"), "only one node lists the host's CPUs")
	for _, c := range []string{"0", "2", "3"} {
		target, err := os.Readlink(filepath.Join(nodesDir, "node1", "cpu"+c))
		require.NoError(t, err)
		assert.Equal(t, "../../cpu/cpu"+c, target)
	}
	assert.Equal(t, "0,2-3\n", read("node1/cpulist"))
	assert.Equal(t, "00000000,0000000d\n", read("node1/cpumap"), "the kernel's width")
	assert.Equal(t, "Node 1 MemTotal: 1024 kB\n", read("node1/meminfo"))
	assert.Equal(t, "1\n", read("node1/hugepages/hugepages-2048kB/nr_hugepages"))
	for _, p := range []string{"node1/meminfo", "node1/cpulist", "node1/cpu5", "node1/hugepages/hugepages-2048kB/nr_hugepages"} {
		err := os.WriteFile(filepath.Join(nodesDir, p), []byte("x"), 0o644)
		assert.True(t, errors.Is(err, syscall.EROFS), "%s: a write is refused: %v", p, err)
	}
	// A host CPU the node lists already is refused.
	err = ShowNodes(root, bitmask.MustParseNodeList("0"), bitmask.MustParseCPUList("1"))
	assert.ErrorContains(t, err, "already lists CPU 1")

	// A link in a node's place is refused, and the view stays whole.
	err = ShowNodes(root, bitmask.MustParseNodeList("3"), bitmask.CPUSet{})
	var link *fsutil.SymlinkError
	assert.True(t, errors.As(err, &link), "a link is refused: %v", err)
}

// ReadMachine reads, through a process's /proc/<pid>/root, the nodes,
// CPUs and MemTotal of the namespace it is in: here the test's own (no
// view), so it must agree with the host's files.
func TestReadMachineOfThisProcess(t *testing.T) {
	root, err := fsutil.OpenRoot("/")
	require.NoError(t, err)
	defer root.Close()
	m, err := ReadMachine(root, uint32(os.Getpid()))
	require.NoError(t, err)
	ids, err := ShownNodes(root)
	require.NoError(t, err)
	require.NotEmpty(t, ids)
	assert.Equal(t, bitmask.NewNodeSet(ids...).String(), m.Nodes)
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	require.NoError(t, err)
	want, err := bitmask.ParseCPUList(strings.TrimSpace(string(online)))
	require.NoError(t, err)
	got, err := bitmask.ParseCPUList(m.CPUs)
	require.NoError(t, err)
	assert.True(t, want.IsSubsetOf(got), "the nodes list every online CPU: %s of %s", m.CPUs, want)
	meminfo, err := os.ReadFile("/proc/meminfo")
	require.NoError(t, err)
	assert.Contains(t, string(meminfo), "MemTotal:")
	var kb uint64
	_, err = fmt.Sscanf(string(meminfo), "MemTotal: %d kB", &kb)
	require.NoError(t, err)
	assert.Equal(t, kb<<10, m.MemTotalBytes)

	_, err = ReadMachine(root, 0)
	assert.Error(t, err)
}
