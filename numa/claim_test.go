package numa

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claimFixture is the small real dump the huge-claim tests start from:
// a QEMU guest with 4 CPUs in 2 nodes.
const claimFixture = "qemu-2node-v2"

// copyFixture copies a dump's sys/ into a temporary directory, links
// as links, so that a test can edit its files.
func copyFixture(tb testing.TB, name string) string {
	tb.Helper()
	src := filepath.Join(fixtureRoot, name, "sys")
	dst := filepath.Join(tb.TempDir(), "sys")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
	})
	require.NoError(tb, err)
	return dst
}

// claimDump is claimFixture whose cpu/online, present and possible all
// claim list (its 4 cpuN directories unchanged).
func claimDump(tb testing.TB, list string) string {
	tb.Helper()
	root := copyFixture(tb, claimFixture)
	for _, f := range []string{"online", "present", "possible"} {
		require.NoError(tb, os.WriteFile(filepath.Join(root, cpuDir, f), []byte(list+"\n"), 0o644))
	}
	return root
}

// BenchmarkDiscoverHugeRangeClaim discovers a 4-CPU dump whose CPU
// lists claim far more CPUs than it has directories for (#24 item 12:
// 0-65535 took 3 s when every claimed CPU's files were tried).
func BenchmarkDiscoverHugeRangeClaim(b *testing.B) {
	for _, list := range []string{"0-3", "0-8191", "0-65535"} {
		root := claimDump(b, list)
		b.Run(list, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = NewFS(root).Discover() // 0-65535 is refused: the time to say so
			}
		})
	}
}

// sameMachine asserts that got is want's machine: the same CPUs, nodes
// and sockets (the lists may differ, and so the warnings).
func sameMachine(t *testing.T, want, got *Topology) {
	t.Helper()
	assert.Equal(t, want.CPUs, got.CPUs)
	assert.Equal(t, want.Nodes, got.Nodes)
	assert.Equal(t, want.Sockets, got.Sockets)
	assert.Equal(t, want.Online, got.Online)
	assert.Equal(t, want.Present, got.Present)
}

// Repro (#24 item 12, #28): cpu/online = present = possible = 0-65535 on
// a 4-CPU dump made discover try the files of 65,536 CPUs (3 s; plan 4
// s). No kernel has CPU 8192 or above (NR_CPUS), so such a list is not
// the machine's: a clear error naming the file, at once. A claim a
// kernel can make (0-8191: possible on an NR_CPUS=8192 kernel) is
// bounded by the cpuN directories there are, as lscpu bounds it: the
// 4 real CPUs, the rest said once in a warning.
func TestDiscoverHugeRangeClaim(t *testing.T) {
	want, err := NewFS(copyFixture(t, claimFixture)).Discover()
	require.NoError(t, err)
	require.Equal(t, "0-3", want.Present.String())

	_, err = NewFS(claimDump(t, "0-65535")).Discover()
	require.Error(t, err)
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	assert.True(t, strings.HasSuffix(fe.Path, "/"+cpuDir+"/online"), "the error names %s", fe.Path)
	assert.Contains(t, err.Error(), `invalid content "0-65535": CPUs 8192-65535: no kernel has CPU ids at or above 8192`)

	got, err := NewFS(claimDump(t, "0-8191")).Discover()
	require.NoError(t, err)
	sameMachine(t, want, got)
	assert.Equal(t, "0-8191", got.Possible.String(), "possible is what the kernel says")
	assert.Contains(t, strings.Join(got.Warnings, "\n"), "name CPUs 4-8191 that have no cpuN directory: they are not counted")
}

// kernel_max (NR_CPUS - 1) bounds the lists of the kernel that wrote it,
// as it bounds lscpu's; a kernel_max no kernel has is refused.
func TestDiscoverCPUBoundFromKernelMax(t *testing.T) {
	write := func(root, file, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(root, file), []byte(content), 0o644))
	}
	root := copyFixture(t, claimFixture)
	write(root, cpuDir+"/kernel_max", "3\n")
	_, err := NewFS(root).Discover()
	require.NoError(t, err, "0-3 is within kernel_max 3")

	write(root, cpuDir+"/possible", "0-7\n")
	_, err = NewFS(root).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), cpuDir+`/possible: invalid content "0-7": CPUs 4-7: beyond devices/system/cpu/kernel_max (3): this kernel has at most 4 CPUs`)

	write(root, cpuDir+"/possible", "0-3\n")
	require.NoError(t, os.MkdirAll(filepath.Join(root, cpuDir, "cpu4"), 0o755))
	_, err = NewFS(root).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), cpuDir+"/cpu4: not cpu<id>: 4 is out of range (allowed 0..3)")

	for _, bad := range []string{"8192", "-1", "x"} {
		root := copyFixture(t, claimFixture)
		write(root, cpuDir+"/kernel_max", bad+"\n")
		_, err = NewFS(root).Discover()
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), cpuDir+`/kernel_max: invalid content "`+bad+`"`)
		assert.Contains(t, err.Error(), "no kernel has more than 8192 CPUs")
	}
}

// The per-CPU files are bounded too: a node's cpulist, a CPU's sibling
// list or mask claiming a CPU no kernel has is refused, naming the file;
// within the bound, CPUs without a directory are ignored with a warning.
func TestDiscoverBoundsEveryCPUList(t *testing.T) {
	want, err := NewFS(copyFixture(t, claimFixture)).Discover()
	require.NoError(t, err)
	for _, c := range []struct{ file, content, err string }{
		{"devices/system/node/node0/cpulist", "0-65535", `node0/cpulist: invalid content "0-65535": CPUs 8192-65535`},
		{"devices/system/node/node0/cpumap", "1" + strings.Repeat(",00000000", 256), `node0/cpumap: invalid content "1,00000000,`},
		{cpuDir + "/cpu0/topology/thread_siblings_list", "0,8192", `thread_siblings_list: invalid content "0,8192": CPUs 8192`},
	} {
		root := copyFixture(t, claimFixture)
		if strings.HasSuffix(c.file, "cpumap") {
			require.NoError(t, os.Remove(filepath.Join(root, "devices/system/node/node0/cpulist")))
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, c.file), []byte(c.content+"\n"), 0o644))
		_, err := NewFS(root).Discover()
		require.Error(t, err, c.file)
		assert.Contains(t, err.Error(), c.err)
	}

	root := copyFixture(t, claimFixture)
	require.NoError(t, os.WriteFile(filepath.Join(root, "devices/system/node/node0/cpulist"), []byte("0-1,4-8191\n"), 0o644))
	got, err := NewFS(root).Discover()
	require.NoError(t, err)
	sameMachine(t, want, got)
	assert.Contains(t, strings.Join(got.Warnings, "\n"), "node0 lists CPUs 4-8191 that are not present; ignoring them")
}

// Node lists are bounded the same way: by the nodeN directories there
// are, and by MAX_NUMNODES (1024, NODES_SHIFT 10, the largest any
// architecture allows), beyond which a list or a directory is an error
// naming it.
func TestDiscoverNodeListClaims(t *testing.T) {
	want, err := NewFS(copyFixture(t, claimFixture)).Discover()
	require.NoError(t, err)
	node := func(root, file string) string { return filepath.Join(root, "devices/system/node", file) }

	root := copyFixture(t, claimFixture)
	for _, f := range []string{"online", "possible", "has_cpu", "has_memory"} {
		require.NoError(t, os.WriteFile(node(root, f), []byte("0-1023\n"), 0o644))
	}
	got, err := NewFS(root).Discover()
	require.NoError(t, err)
	sameMachine(t, want, got)
	assert.Contains(t, strings.Join(got.Warnings, "\n"), `devices/system/node/has_cpu says "0-1023" but the nodes with online CPUs are "0-1"`)

	for _, f := range []string{"online", "possible", "has_cpu", "has_memory"} {
		root := copyFixture(t, claimFixture)
		require.NoError(t, os.WriteFile(node(root, f), []byte("0-65535\n"), 0o644))
		_, err := NewFS(root).Discover()
		require.Error(t, err, f)
		assert.Contains(t, err.Error(), "devices/system/node/"+f+`: invalid content "0-65535"`)
	}

	root = copyFixture(t, claimFixture)
	require.NoError(t, os.MkdirAll(node(root, "node1024"), 0o755))
	_, err = NewFS(root).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "devices/system/node/node1024: not node<id>: 1024 is out of range (allowed 0..1023)")
}
