package configref

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// The config init writes for any real machine parses without unknown keys
// and plans on that machine; its commented keys, uncommented, parse too.
func TestInitConfigPlansOnEveryFixture(t *testing.T) {
	dirs, err := filepath.Glob("../../../testdata/sysfs/*/sys")
	require.NoError(t, err)
	for _, d := range dirs {
		name := filepath.Base(filepath.Dir(d))
		t.Run(name, func(t *testing.T) {
			topo := discoverFixture(t, name)
			text := InitConfig(topo, "worker1", nil)
			c, err := config.Parse("config.toml", text)
			require.NoError(t, err, "%s", text)
			c.Kubelet.Hostname = "worker1"
			p, err := planner.NewPlan(topo, c)
			require.NoError(t, err, "%s", text)
			assert.Contains(t, string(text), "#   "+p.Partitions[0].Name+": nodes "+p.Partitions[0].Nodes.String())

			// Every "# key = value" line is a valid key of its table.
			var uncommented []string
			for _, l := range strings.Split(string(text), "\n") {
				if rest, ok := strings.CutPrefix(l, "# [["); ok {
					uncommented = append(uncommented, "[["+rest)
					continue
				}
				if rest, ok := strings.CutPrefix(l, "# "); ok && strings.Contains(rest, " = ") && !strings.HasPrefix(rest, "  ") {
					key, _, _ := strings.Cut(rest, " = ")
					if !strings.ContainsAny(key, " :") {
						uncommented = append(uncommented, rest)
						continue
					}
				}
				uncommented = append(uncommented, l)
			}
			_, err = config.Parse("uncommented.toml", []byte(strings.Join(uncommented, "\n")))
			require.NoError(t, err, "%s", strings.Join(uncommented, "\n"))
		})
	}
}

func TestInitConfigShrinksReservationsOnSmallNodes(t *testing.T) {
	text := string(InitConfig(discoverFixture(t, "qemu-2node-v2"), "vm", nil))
	assert.Contains(t, text, "\nkube_reserved_memory = \"100Mi\"\n")
	assert.Contains(t, text, "#   node0: nodes 0, CPUs 1")
}

// discoverFixture is a real machine's sysfs snapshot of testdata/sysfs.
func discoverFixture(t testing.TB, name string) *numa.Topology {
	t.Helper()
	topo, err := numa.NewFS(filepath.Join("..", "..", "..", "testdata", "sysfs", name, "sys")).Discover()
	require.NoError(t, err)
	return topo
}
