package render

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// example is a machine and a plan for it, rendered by the golden, verify
// and accounting tests alike.
type example struct {
	name  string
	plan  func(t testing.TB) (planner.Plan, *numa.Topology)
	sysfs string // "" for hand-built plans
}

var examples = []example{
	// The seed recipe's 2-socket machine, plan built by hand.
	{name: "seed-2socket", plan: func(testing.TB) (planner.Plan, *numa.Topology) { return seedPlan(), nil }},
	// Real sysfs dumps through discovery and planning.
	{name: "epyc-8node", sysfs: "hwloc-64amd64-4s2n4ca2co"},
	{name: "epyc-socket-shared", sysfs: "hwloc-32amd64-4s2n4c-cgroup2"},
	// Online CPUs 4,6,…,20 are listed by no node (node 0 is missing):
	// kubelet does not count them.
	{name: "orphan-cpus", sysfs: "hwloc-offline-cpu0-node0"},
	// NICs by NUMA locality moved into each partition's namespace.
	{name: "nics-2node", sysfs: "synthetic-2node-nics"},
}

// load builds an example's plan: from its sysfs dump and
// testdata/configs/<name>.toml when it has one.
func (e example) load(t testing.TB) (planner.Plan, *numa.Topology) {
	t.Helper()
	if e.plan != nil {
		return e.plan(t)
	}
	root := filepath.Join("..", "..", "testdata", "sysfs", e.sysfs, "sys")
	topo, err := numa.NewFS(root).Discover()
	if err != nil {
		t.Fatalf("discovering %s: %v", root, err)
	}
	cfgPath := filepath.Join("testdata", "configs", e.name+".toml")
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(cfgPath, data)
	if err != nil {
		t.Fatalf("config %s: %v", cfgPath, err)
	}
	plan, err := planner.NewPlanFor(topo, planner.ExampleFacts, cfg)
	if err != nil {
		t.Fatalf("planning %s with %s: %v", e.sysfs, cfgPath, err)
	}
	return *plan, topo
}

func (e example) render(t testing.TB) (planner.Plan, *numa.Topology, bundle.Bundle) {
	t.Helper()
	plan, topo := e.load(t)
	b, err := Render(plan)
	if err != nil {
		t.Fatalf("%s: Render: %v", e.name, err)
	}
	return plan, topo, b
}
