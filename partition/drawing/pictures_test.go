package drawing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/kubeletgen"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// examples are those whose machine is a real sysfs dump (their sysfs
// file names it): their drawings are kept beside their plans.
func examples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "sysfs"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(filepath.Dir(f)))
	}
	return names
}

// testVersion is what the CLI's tests say of their version (no -ldflags,
// no module version), so that both write the same examples' drawings.
const testVersion = "dev"

func discover(t *testing.T, dump string) *numa.Topology {
	t.Helper()
	topo, err := numa.NewFS(filepath.Join("..", "..", "testdata", "sysfs", dump, "sys")).Discover()
	require.NoError(t, err)
	return topo
}

// examplePicture is what `numa-partition plan -o svg` draws of an example:
// its dump, config and facts.
func examplePicture(t *testing.T, name string) Picture {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", name)
	fixture, err := os.ReadFile(filepath.Join(dir, "sysfs"))
	require.NoError(t, err)
	topo := discover(t, strings.TrimSpace(string(fixture)))
	data, err := os.ReadFile(filepath.Join(dir, "config.toml"))
	require.NoError(t, err)
	cfg, err := config.Parse("config.toml", data)
	require.NoError(t, err)
	host, err := planner.LoadFacts(filepath.Join(dir, "facts.json"))
	require.NoError(t, err)
	plan, err := planner.NewPlanFor(topo, host.Facts, cfg)
	require.NoError(t, err)
	return withAllocatable(t, Picture{Plan: plan, Topology: topo, Version: testVersion, ConfigDigest: ConfigDigest(data)})
}

// smallReservations plan the dumps whose nodes are too small for the
// default kubelet reservations (qemu-2node-v2: 1 GiB a node).
const smallReservations = `[kubelet]
hostname = "h"
kube_reserved_memory = "64Mi"
system_reserved_memory = "64Mi"
eviction_hard_memory = "64Mi"
`

// dumpPicture is the default config's plan of a testdata dump, or, where
// the defaults do not fit the machine, smallReservations'.
func dumpPicture(t *testing.T, dump string) Picture {
	t.Helper()
	topo := discover(t, dump)
	plan, err := planner.NewPlan(topo, &config.Config{Kubelet: config.KubeletConfig{Hostname: "h"}})
	if err == nil {
		return withAllocatable(t, Picture{Plan: plan, Topology: topo, Version: testVersion})
	}
	cfg, err := config.Parse("small.toml", []byte(smallReservations))
	require.NoError(t, err)
	plan, err = planner.NewPlan(topo, cfg)
	require.NoError(t, err, dump)
	return withAllocatable(t, Picture{Plan: plan, Topology: topo, Version: testVersion, ConfigDigest: ConfigDigest([]byte(smallReservations))})
}

type namedPicture struct {
	name string
	pic  Picture
}

// allPictures are every example with a dump and every dump in testdata.
func allPictures(t *testing.T) []namedPicture {
	t.Helper()
	var out []namedPicture
	for _, name := range examples(t) {
		out = append(out, namedPicture{"examples/" + name, examplePicture(t, name)})
	}
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sysfs", "*", "sys"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, d := range dirs {
		dump := filepath.Base(filepath.Dir(d))
		out = append(out, namedPicture{dump, dumpPicture(t, dump)})
	}
	return out
}

// withAllocatable is pic with its partitions' allocatable, as plan -o svg
// derives it (kubeletgen.Resources).
func withAllocatable(t *testing.T, pic Picture) Picture {
	t.Helper()
	pic.Allocatable = map[string]map[string]string{}
	for i := range pic.Plan.Partitions {
		r, err := kubeletgen.Resources(pic.Plan, &pic.Plan.Partitions[i])
		require.NoError(t, err)
		pic.Allocatable[r.Partition] = r.Allocatable
	}
	return pic
}
