package planner

import (
	"errors"
	"testing"

	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// FuzzParsePlan: any config text either fails with located Errors or
// parses, and a parsed config either plans (with the invariants) or fails
// with Errors. Never a panic.
func FuzzParsePlan(f *testing.F) {
	for _, s := range []string{
		"",
		"[host]\nreserved_cpus = \"0,4\"\n",
		"[partitioning]\nmode = \"custom\"\ngroups = [[0], \"1\"]\n",
		"[[partition]]\nnodes = [1]\nname = \"x\"\nlabels = { a = \"b\" }\n",
		"[[host.hugepages]]\nsize = \"1Gi\"\ncount = 3\nnodes = \"0-1\"\n",
		"[kubelet]\nport = 1\nport_stride = 0\nnode_name = \"{hostname}\"\n",
		"[host]\nreserved_memory = { 0 = \"1Gi\", 1 = \"100Mi\" }\n",
	} {
		f.Add(s)
	}
	topo := synth(spec{sockets: 2, nodesPerSocket: 2, coresPerNode: 2, threads: 2, memOnly: 1})
	f.Fuzz(func(t *testing.T, text string) {
		c, err := config.Parse("config.toml", []byte(text))
		if err != nil {
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("parse error is not Errors: %v", err)
			}
			return
		}
		c.Kubelet.Hostname = "h"
		p, err := NewPlan(topo, c)
		if err != nil {
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("plan error is not Errors: %v", err)
			}
			return
		}
		checkInvariants(t, topo, p)
	})
}

// BenchmarkNewPlan plans real dumps with the default config, then
// numatest's big hosts (discovered from their synthetic trees) with
// their own configs and host facts (shapeFacts), as plan does.
func BenchmarkNewPlan(b *testing.B) {
	for _, name := range []string{"hwloc-64amd64-4s2n4ca2co", "hwloc-128ia64-17n4s2c"} {
		topo := discoverFixture(b, name)
		c := &config.Config{Kubelet: config.KubeletConfig{Hostname: "h"}}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewPlan(topo, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, s := range numatest.BigHosts {
		topo, c := discoverShape(b, s)
		facts := shapeFacts(s)
		b.Run(s.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewPlanFor(topo, facts, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
