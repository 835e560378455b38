package nodeview

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/numa"
)

// A host's root memory.stat (cgroup v1), as the kernel wrote it
// (shortened): the root's own figures, then the hierarchy's.
const hostMemcgStat = `cache 16318464
rss 2580480
rss_huge 0
shmem 10395648
mapped_file 8359936
dirty 36864
writeback 0
swap 0
pgpgin 52132
pgfault 61631
inactive_anon 0
active_anon 0
inactive_file 73728
active_file 5849088
unevictable 12976128
hierarchical_memory_limit 9223372036854771712
total_cache 10492112896
total_rss 2702487552
total_swap 0
total_pgfault 260777367
total_inactive_anon 2699800576
total_inactive_file 5812027392
total_active_file 10000
`

func parseNodes(t *testing.T) []numa.NodeMeminfo {
	t.Helper()
	var out []numa.NodeMeminfo
	for i, s := range nodeMeminfos {
		m, err := numa.ParseNodeMeminfo(i, s)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

// statValues reads "key value" lines.
func statValues(t *testing.T, b []byte) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		k, v, ok := strings.Cut(line, " ")
		require.True(t, ok, line)
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, line)
		out[k] = n
	}
	return out
}

// The root's usage is the nodes' memory that is not free; cAdvisor's
// working set is that less the inactive file pages of
// total_inactive_file.
func TestMemcgOfTheNodes(t *testing.T) {
	nodes := parseNodes(t)
	sum := sumNodes(nodes[:1])
	assert.Equal(t, "2048000000\n", string(MemcgUsage(sum)), "node 0: (4000000 − 2000000) kB")
	assert.Equal(t, "3122200576\n", string(MemcgUsage(sumNodes(nodes))), "both: (8049024 − 5000000) kB")

	stat, err := MemcgStat([]byte(hostMemcgStat), sum)
	require.NoError(t, err)
	v := statValues(t, stat)
	assert.EqualValues(t, 500000<<10, v["total_inactive_file"], "node 0's Inactive(file)")
	assert.EqualValues(t, 500000<<10, v["inactive_file"])
	assert.EqualValues(t, 1100000<<10, v["total_cache"], "node 0's FilePages")
	assert.EqualValues(t, 300000<<10, v["total_rss"], "node 0's AnonPages")
	assert.EqualValues(t, 400000<<10, v["total_active_file"], "node 0's Active(file)")
	assert.EqualValues(t, 0, v["total_inactive_anon"], "node 0 lists no Inactive(anon): none")
	// Counts and limits stay the host's, and the lines keep their order.
	assert.EqualValues(t, 260777367, v["total_pgfault"])
	assert.EqualValues(t, uint64(9223372036854771712), v["hierarchical_memory_limit"])
	assert.Equal(t, len(strings.Split(hostMemcgStat, "\n")), len(strings.Split(string(stat), "\n")))
	assert.True(t, strings.HasPrefix(string(stat), "cache 1126400000\nrss 307200000\n"), string(stat))
}

func TestMemcgSwapUsageAddsTheHostsSwap(t *testing.T) {
	sum := sumNodes(parseNodes(t)[:1])
	host := strings.Replace(hostMeminfo, "SwapFree:        1048572 kB", "SwapFree:        1000000 kB", 1)
	b, err := MemcgSwapUsage(sum, []byte(host))
	require.NoError(t, err)
	assert.Equal(t, strconv.FormatUint((4000000-2000000+48572)<<10, 10)+"\n", string(b))
	_, err = MemcgSwapUsage(sum, []byte("nonsense\n"))
	assert.ErrorContains(t, err, "/proc/meminfo line 1")
}

func TestMemcgStatRefusesBadInput(t *testing.T) {
	sum := sumNodes(parseNodes(t))
	for _, bad := range []string{"cache\n", "cache x\n", " 12\n", "cache 1\nrss -1\n"} {
		_, err := MemcgStat([]byte(bad), sum)
		assert.ErrorContains(t, err, "memory.stat line", bad)
	}
}

func FuzzMemcgStat(f *testing.F) {
	f.Add([]byte(hostMemcgStat))
	f.Add([]byte("cache 1\n"))
	sum := numa.NodeMeminfo{"FilePages": 1 << 20, "Inactive(file)": 1 << 10}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := MemcgStat(b, sum)
		if err != nil {
			return
		}
		// What it makes, it reads back: the same keys, in order.
		again, err := MemcgStat(out, sum)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again))
	})
}
