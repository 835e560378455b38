package nodeview

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/numa"
)

// A 2-node host: /proc/meminfo and each node's meminfo, as the kernel
// wrote them (shortened).
const hostMeminfo = `MemTotal:        8049024 kB
MemFree:         5000000 kB
MemAvailable:    6100000 kB
Buffers:           20000 kB
Cached:          1500000 kB
SwapCached:            0 kB
Active:           900000 kB
Inactive:        1300000 kB
Active(file):     600000 kB
Inactive(file):   700000 kB
SwapTotal:       1048572 kB
SwapFree:        1048572 kB
KReclaimable:     200000 kB
CommitLimit:     5073084 kB
HugePages_Total:       4
HugePages_Free:        4
HugePages_Rsvd:        0
Hugepagesize:       2048 kB
`

var nodeMeminfos = []string{`Node 0 MemTotal:        4000000 kB
Node 0 MemFree:         2000000 kB
Node 0 MemUsed:         2000000 kB
Node 0 SwapCached:            0 kB
Node 0 Active:           600000 kB
Node 0 Inactive:         900000 kB
Node 0 Active(file):     400000 kB
Node 0 Inactive(file):   500000 kB
Node 0 FilePages:       1100000 kB
Node 0 AnonPages:        300000 kB
Node 0 KReclaimable:     150000 kB
Node 0 HugePages_Total:     1
Node 0 HugePages_Free:      1
Node 0 HugePages_Surp:      0
`, `Node 1 MemTotal:        4049024 kB
Node 1 MemFree:         3000000 kB
Node 1 MemUsed:         1049024 kB
Node 1 SwapCached:            0 kB
Node 1 Active:           300000 kB
Node 1 Inactive:         400000 kB
Node 1 Active(file):     200000 kB
Node 1 Inactive(file):   200000 kB
Node 1 FilePages:        420000 kB
Node 1 AnonPages:        100000 kB
Node 1 KReclaimable:      50000 kB
Node 1 HugePages_Total:     3
Node 1 HugePages_Free:      3
Node 1 HugePages_Surp:      0
`}

func nodes(t *testing.T, ids ...int) []numa.NodeMeminfo {
	t.Helper()
	var out []numa.NodeMeminfo
	for _, id := range ids {
		m, err := numa.ParseNodeMeminfo(id, nodeMeminfos[id])
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

// kB is the value of key in a meminfo text, in kB (or the count).
func kB(t *testing.T, text, key string) uint64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if k, rest, ok := strings.Cut(line, ":"); ok && k == key {
			v, err := strconv.ParseUint(strings.Fields(rest)[0], 10, 64)
			require.NoError(t, err)
			return v
		}
	}
	t.Fatalf("no %s in\n%s", key, text)
	return 0
}

func TestMeminfoOfOneNode(t *testing.T) {
	b, err := Meminfo([]byte(hostMeminfo), nodes(t, 1))
	require.NoError(t, err)
	got := string(b)
	assert.EqualValues(t, 4049024, kB(t, got, "MemTotal"), "the node's memory")
	assert.EqualValues(t, 3000000, kB(t, got, "MemFree"))
	assert.EqualValues(t, 0, kB(t, got, "Buffers"))
	assert.EqualValues(t, 420000, kB(t, got, "Cached"), "the node's FilePages")
	assert.EqualValues(t, 3, kB(t, got, "HugePages_Total"), "the node's pages")
	assert.EqualValues(t, 1048572, kB(t, got, "SwapTotal"), "swap is the host's")
	assert.EqualValues(t, 2048, kB(t, got, "Hugepagesize"))
	// Held back on the host: 5000000+600000+700000+200000 − 6100000 =
	// 400000 kB, node 1's share of it 4049024/8049024.
	want := uint64(3000000 + 200000 + 200000 + 50000 - 400000*4049024/8049024)
	assert.InDelta(t, want, kB(t, got, "MemAvailable"), 1)
	// The host's lines, in the host's order.
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		k, _, _ := strings.Cut(line, ":")
		keys = append(keys, k)
	}
	var hostKeys []string
	for _, line := range strings.Split(strings.TrimSpace(hostMeminfo), "\n") {
		k, _, _ := strings.Cut(line, ":")
		hostKeys = append(hostKeys, k)
	}
	assert.Equal(t, hostKeys, keys)
}

func TestMeminfoSumsNodes(t *testing.T) {
	b, err := Meminfo([]byte(hostMeminfo), nodes(t, 0, 1))
	require.NoError(t, err)
	got := string(b)
	assert.EqualValues(t, 8049024, kB(t, got, "MemTotal"))
	assert.EqualValues(t, 5000000, kB(t, got, "MemFree"))
	assert.EqualValues(t, 4, kB(t, got, "HugePages_Total"))
	// Both nodes are the whole host: its own MemAvailable.
	assert.InDelta(t, 6100000, kB(t, got, "MemAvailable"), 1)
}

// What reads it: cAdvisor's MemTotal pattern (machine.GetMachineMemoryCapacity)
// and runc's "Key: value kB" split (the v2 root's swap), in the kernel's
// column layout.
func TestMeminfoReadAsTheKernel(t *testing.T) {
	b, err := Meminfo([]byte(hostMeminfo), nodes(t, 0))
	require.NoError(t, err)
	m := regexp.MustCompile(`MemTotal:\s*([0-9]+) kB`).FindSubmatch(b)
	require.Len(t, m, 2)
	assert.Equal(t, "4000000", string(m[1]))
	assert.Contains(t, string(b), "MemTotal:        4000000 kB\n")
	assert.Contains(t, string(b), "HugePages_Total:       1\n")
	lines, err := parseHostMeminfo(b)
	require.NoError(t, err, "the view reads back as /proc/meminfo")
	assert.Len(t, lines, strings.Count(hostMeminfo, "\n"))
}

func TestMeminfoRefusesBadInput(t *testing.T) {
	for name, host := range map[string]string{
		"no MemTotal":    "MemFree: 1 kB\n",
		"no colon":       "MemTotal 1 kB\n",
		"other unit":     "MemTotal: 1 MB\n",
		"not a number":   "MemTotal: x kB\n",
		"twice":          "MemTotal: 1 kB\nMemTotal: 2 kB\n",
		"beyond a size":  "MemTotal: 18446744073709551615 kB\n",
		"empty":          "",
		"spaces in key":  "Mem Total: 1 kB\n",
		"too many words": "MemTotal: 1 kB x\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Meminfo([]byte(host), nodes(t, 0))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "/proc/meminfo")
		})
	}
	_, err := Meminfo([]byte(hostMeminfo), nil)
	assert.ErrorContains(t, err, "no NUMA node")
}

func FuzzMeminfo(f *testing.F) {
	f.Add([]byte(hostMeminfo))
	f.Add([]byte("MemTotal: 0 kB\nMemAvailable: 99999999 kB\n"))
	f.Fuzz(func(t *testing.T, host []byte) {
		n, err := numa.ParseNodeMeminfo(0, nodeMeminfos[0])
		require.NoError(t, err)
		b, err := Meminfo(host, []numa.NodeMeminfo{n})
		if err != nil {
			return
		}
		// Whatever the host says, the view is /proc/meminfo again and
		// never offers more than its nodes hold.
		lines, err := parseHostMeminfo(b)
		require.NoError(t, err)
		for _, l := range lines {
			if l.key == "MemAvailable" {
				assert.LessOrEqual(t, l.value, n["MemTotal"])
			}
		}
	})
}
