package planner

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

var update = flag.Bool("update", false, "rewrite examples/*/plan.json and plan.txt of the examples without a sysfs dump")

// The examples/ configs and the plans they produce. Machines come from a
// real dump (the example's sysfs file names it) or, for shapes no dump
// has, from a synthetic spec.
var exampleMachines = map[string]spec{
	"seed-2socket":     {sockets: 2, nodesPerSocket: 1, coresPerNode: 4},
	"epyc-nps4":        {sockets: 2, nodesPerSocket: 4, coresPerNode: 8, threads: 2, mem: gi(64)},
	"4socket":          {}, // sysfs
	"gpu-memory-nodes": {}, // sysfs
}

func TestExamples(t *testing.T) {
	for name, s := range exampleMachines {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "..", "examples", name)
			var topo *numa.Topology
			fixture, err := os.ReadFile(filepath.Join(dir, "sysfs"))
			dump := err == nil
			if dump {
				topo = discoverFixture(t, strings.TrimSpace(string(fixture)))
			} else {
				topo = synth(s)
			}
			c, err := config.LoadFile(filepath.Join(dir, "config.toml"))
			require.NoError(t, err)
			host, err := LoadFacts(filepath.Join(dir, "facts.json"))
			require.NoError(t, err)
			p, err := NewPlanFor(topo, host.Facts, c)
			require.NoError(t, err)
			checkInvariants(t, topo, p)
			if dump {
				// Its plan.json and plan.txt are the CLI's, from the dump
				// and facts.json: cmd/numa-partition TestExamplesFromDumpAndFacts.
				return
			}

			var js bytes.Buffer
			enc := json.NewEncoder(&js)
			enc.SetIndent("", "  ")
			require.NoError(t, enc.Encode(p))
			var txt bytes.Buffer
			require.NoError(t, WriteTable(&txt, p, output.Width))

			for file, got := range map[string][]byte{"plan.json": js.Bytes(), "plan.txt": txt.Bytes()} {
				path := filepath.Join(dir, file)
				if *update {
					require.NoError(t, os.WriteFile(path, got, 0o644))
					continue
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "run go test ./partition -run TestExamples -update")
				assert.Equal(t, string(want), string(got), "%s is stale: go test ./partition -run TestExamples -update", path)
			}
		})
	}
}
