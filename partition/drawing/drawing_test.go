package drawing

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
)

var update = flag.Bool("update", false, "rewrite examples/*/plan.svg and plan.dot")

// The examples whose machine is a real sysfs dump.
var examples = []string{"4socket", "gpu-memory-nodes"}

func examplePlan(t *testing.T, name string) (*planner.Plan, *numa.Topology) {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", name)
	fixture, err := os.ReadFile(filepath.Join(dir, "sysfs"))
	require.NoError(t, err)
	topo, err := numa.NewFS(filepath.Join("..", "..", "testdata", "sysfs", strings.TrimSpace(string(fixture)), "sys")).Discover()
	require.NoError(t, err)
	cfg, err := planner.LoadFile(filepath.Join(dir, "config.toml"))
	require.NoError(t, err)
	host, err := planner.LoadFacts(filepath.Join(dir, "facts.json"))
	require.NoError(t, err)
	plan, err := planner.NewPlanFor(topo, host.Facts, cfg)
	require.NoError(t, err)
	return plan, topo
}

// The drawings of the examples are kept beside their plans; a change of
// either shows in review.
func TestExampleDrawings(t *testing.T) {
	for _, name := range examples {
		t.Run(name, func(t *testing.T) {
			plan, topo := examplePlan(t, name)
			for file, draw := range map[string]func(io.Writer, *planner.Plan, *numa.Topology) error{"plan.svg": SVG, "plan.dot": DOT} {
				var got bytes.Buffer
				require.NoError(t, draw(&got, plan, topo))
				path := filepath.Join("..", "..", "examples", name, file)
				if *update {
					require.NoError(t, os.WriteFile(path, got.Bytes(), 0o644))
					continue
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "run go test ./partition/drawing -update")
				assert.Equal(t, string(want), got.String(), "%s is stale: run go test ./partition/drawing -update", path)
			}
		})
	}
}

// The SVG is well-formed XML, and every online CPU is drawn exactly once
// in the colour of the partition that gets it (the host's grey for the
// rest): what the picture claims is the plan.
func TestSVGColoursEveryCPUByItsOwner(t *testing.T) {
	for _, name := range examples {
		plan, topo := examplePlan(t, name)
		var out bytes.Buffer
		require.NoError(t, SVG(&out, plan, topo))
		dec := xml.NewDecoder(bytes.NewReader(out.Bytes()))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "%s: not well-formed", name)
		}
		cpuRect := regexp.MustCompile(`fill="(#[0-9a-f]{6})" class="cpu"><title>CPU (\d+): ([^<]+)</title>`)
		drawn := map[int]string{}
		for _, m := range cpuRect.FindAllStringSubmatch(out.String(), -1) {
			id, _ := strconv.Atoi(m[2])
			_, twice := drawn[id]
			assert.False(t, twice, "%s: CPU %d drawn twice", name, id)
			drawn[id] = m[1]
		}
		assert.Equal(t, topo.Online.Len(), len(drawn), "%s: every online CPU once", name)
		for _, cpu := range topo.Online.IDs() {
			want := hostColor
			for _, p := range plan.Partitions {
				if p.CPUs.Has(cpu) {
					want = fill(p)
				}
			}
			assert.Equal(t, want, drawn[cpu], "%s: CPU %d", name, cpu)
		}
		for _, p := range plan.Partitions {
			assert.Contains(t, out.String(), ">"+p.Name+" (numa-type "+p.Color+"): NUMA nodes "+p.Nodes.String(), "%s: legend of %s", name, p.Name)
		}
	}
}

func TestSize(t *testing.T) {
	for b, want := range map[uint64]string{512: "512B", 2 << 20: "2Mi", 1 << 30: "1Gi", 3 << 29: "1.5Gi", 1<<40 + 1<<39: "1.5Ti"} {
		assert.Equal(t, want, size(b))
	}
}
