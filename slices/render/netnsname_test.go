package render

import (
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// Issue 27 (found by FuzzPlanThenRender): a partition named with 13 to 32
// characters planned, in a namespace of its own, and render refused its
// namespace as longer than an interface name may be; it renders, its host
// link shortened to the planner's digest.
func TestLongPartitionNameRendersInItsNamespace_Issue27(t *testing.T) {
	topo, err := numa.NewFS("../../testdata/sysfs/hwloc-32amd64-4s2n4c-cgroup2/sys").Discover()
	if err != nil {
		t.Fatal(err)
	}
	name := "abcdefghijklmnopqrstuvwxyz012345"
	cfg, err := config.Parse("config.toml", []byte("[kubelet]\nhostname = \"h\"\n[[partition]]\nnodes = [0]\nname = \""+name+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planner.NewPlanFor(topo, planner.ExampleFacts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Render(*plan)
	if err != nil {
		t.Fatalf("a 32-character name plans but does not render: %v", err)
	}
	text := fileContent(t, b, unitPath(netnsUnit(name)))
	if !strings.Contains(text, "--namespace np-"+name) || !strings.Contains(text, "--host-link "+planner.HostLinkOf(name)) {
		t.Errorf("%s:\n%s", netnsUnit(name), text)
	}
}
