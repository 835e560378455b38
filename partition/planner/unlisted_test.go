package planner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// #37: the ocp-bm-worker1 dump holds 128 pages of 2 MiB on node 0 that
// no config lists. plan said nothing, and the boot oneshot refused them,
// stopping every kubelet. The plan now decides, by
// host.unlisted_hugepages, and warns saying what apply will do.
func TestPlanUnlistedHugepagesOnTheFixture_Issue37(t *testing.T) {
	topo := discoverFixture(t, "ocp-bm-worker1")
	plan := func(text string) *Plan {
		t.Helper()
		c, err := config.Parse("config.toml", []byte("[kubelet]\nhostname = \"h\"\n"+text))
		require.NoError(t, err)
		p, err := NewPlan(topo, c)
		require.NoError(t, err)
		return p
	}
	pool := func(p *Plan, node int, size uint64) (HugepagePlan, bool) {
		for _, part := range p.Partitions {
			for _, m := range part.Memory {
				for _, h := range m.Hugepages {
					if m.Node == node && h.PageSize == size {
						return h, true
					}
				}
			}
		}
		return HugepagePlan{}, false
	}
	const twoMi = 2 << 20

	free := plan("") // the default
	h, ok := pool(free, 0, twoMi)
	require.True(t, ok, "node 0's 2Mi pool is planned")
	assert.Equal(t, uint64(0), h.Count, "freed")
	assert.Contains(t, free.Warnings, `node 0 holds 128 pages of 2Mi that host.hugepages does not list: apply frees them (host.unlisted_hugepages = "free") and fails if any is in use (0 are now); to keep them, list them in host.hugepages or set host.unlisted_hugepages = "adopt"`)
	_, ok = pool(free, 1, twoMi)
	assert.False(t, ok, "node 1's empty pool is left out")

	adopt := plan("[host]\nunlisted_hugepages = \"adopt\"\n")
	h, ok = pool(adopt, 0, twoMi)
	require.True(t, ok)
	assert.Equal(t, uint64(128), h.Count, "kept")
	assert.Contains(t, strings.Join(adopt.Warnings, "\n"), `node 0 holds 128 pages of 2Mi that host.hugepages does not list: adopted`)

	listed := plan("[[host.hugepages]]\nsize = \"2Mi\"\ncount = 64\nnodes = [0]\n")
	h, _ = pool(listed, 0, twoMi)
	assert.Equal(t, uint64(64), h.Count, "a listed pool is the config's")
	assert.NotContains(t, strings.Join(listed.Warnings, "\n"), "does not list")
}

func TestPlanUnlistedHugepagesRefusesOtherValues(t *testing.T) {
	c, err := config.Parse("config.toml", []byte("[kubelet]\nhostname = \"h\"\n[host]\nunlisted_hugepages = \"refuse\"\n"))
	require.NoError(t, err)
	_, err = NewPlan(discoverFixture(t, "ocp-bm-worker1"), c)
	require.Error(t, err)
	assert.Equal(t, `config.toml:4: key "host.unlisted_hugepages": "refuse": allowed are "free" (plan them at 0: apply frees them, and fails on pages in use) and "adopt" (plan them at the count they hold)`, err.Error())
}
