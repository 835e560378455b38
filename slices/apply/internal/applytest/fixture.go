package applytest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/render"
)

// TestPageSize is the fixtures' hugepage size: 2 MiB.
const TestPageSize = 2 << 20

// Fixture is a hand-built plan and bundle: n partitions "tnodeI" with a
// slice, a runtime and a kubelet (sleep infinity), and a host-wide
// hugepages oneshot.
type Fixture struct {
	Plan   *planner.Plan
	Bundle bundle.Bundle
}

// NewFixture is a Fixture of n partitions.
func NewFixture(n int) *Fixture {
	f := &Fixture{Plan: &planner.Plan{Hostname: "sandbox"}}
	unitDir := "etc/systemd/system/"
	add := func(u bundle.Unit, content string) {
		p := unitDir + u.Name
		u.Files = append([]string{p}, u.Files...)
		f.Bundle.Files = append(f.Bundle.Files, bundle.File{Path: p, Mode: 0o644, Content: []byte(content)})
		f.Bundle.Units = append(f.Bundle.Units, u)
	}
	// Kept on a change, as render keeps the real oneshot (KeepOnChange).
	add(bundle.Unit{Name: "tnuma-hugepages.service", Phase: bundle.PhaseHugepages, Enable: true, Start: true, KeepOnChange: true},
		"[Unit]\nDescription=test hugepages oneshot\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n")
	for i := range n {
		name := fmt.Sprintf("tnode%d", i)
		cpu := i % 2 // the CI machine has 2 CPUs and one node
		slice := name + ".slice"
		add(bundle.Unit{Name: slice, Phase: bundle.PhaseSlice, Partition: name, Start: true,
			Cpuset: &bundle.Cpuset{CPUs: bitmask.NewCPUSet(cpu), Mems: bitmask.NewNodeSet(0)}},
			fmt.Sprintf("[Unit]\nDescription=partition %s\nBefore=slices.target\n[Slice]\nAllowedCPUs=%d\nAllowedMemoryNodes=0\n", name, cpu))
		// Pinned as templates/header.tmpl pins every partition service.
		pin := fmt.Sprintf("CPUAffinity=%d\nNUMAPolicy=bind\nNUMAMask=0\n", cpu)
		add(bundle.Unit{Name: "containerd-" + name + ".service", Phase: bundle.PhaseRuntime, Partition: name, Enable: true, Start: true},
			fmt.Sprintf("[Unit]\nDescription=runtime of %s\n[Service]\nSlice=%s\n%sExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n", name, slice, pin))
		add(bundle.Unit{Name: "kubelet-" + name + ".service", Phase: bundle.PhaseKubelet, Partition: name, Enable: true, Start: true,
			KubeletState: &bundle.KubeletState{Dir: "var/lib/kubelet-" + name, Settings: KubeletSettings(bitmask.NewCPUSet(cpu))}},
			fmt.Sprintf("[Unit]\nDescription=kubelet of %s\nAfter=containerd-%s.service\nRequires=containerd-%s.service\n[Service]\nSlice=%s\n%sExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n", name, name, name, slice, pin))
		f.Plan.Partitions = append(f.Plan.Partitions, planner.Partition{
			Index: i, Name: name, Slice: slice,
			Nodes: bitmask.NewNodeSet(0), CPUs: bitmask.NewCPUSet(cpu), MemoryNodes: bitmask.NewNodeSet(0),
			Kubelet: planner.Kubelet{Port: 20250 + 10*i, HealthzPort: 20248 + 10*i},
		})
		if i < 2 { // the fake sysfs has two nodes
			f.Plan.Partitions[i].Memory = []planner.NodeMemory{{Node: i, Hugepages: []planner.HugepagePlan{{PageSize: TestPageSize, Count: uint64(4 + i)}}}}
		}
	}
	return f
}

// Typed is the fixture's bundle with what render types beside the text,
// from the fixture's plan with render's own functions: the hugepage pools,
// the ports and the partitions that need cgroup v2.
func (f *Fixture) Typed() (bundle.Bundle, error) {
	b := f.Bundle
	pools, err := render.HugepagePools(f.Plan)
	if err != nil {
		return b, err
	}
	b.Hugepages, b.Ports, b.CgroupV2Only = pools, render.Ports(f.Plan, b.Units), nil
	b.Hostname, b.ReservedCPUs, b.Partitions = f.Plan.Hostname, f.Plan.Host.ReservedCPUs, render.PartitionsOf(f.Plan)
	for _, p := range f.Plan.Partitions {
		if p.Allocator.Mode == config.AllocatorModeNRI {
			b.CgroupV2Only = append(b.CgroupV2Only, p.Name)
		}
	}
	return b, nil
}

// KubeletSettings are a fixture kubelet's manager settings: its
// partition's CPUs decide its reserved ones, as in a rendered bundle.
func KubeletSettings(cpus bitmask.CPUSet) string { return "cpu=static partitionCPUs=" + cpus.String() }

// SetSliceCPUs gives a partition's slice other CPUs, as render would: in
// the slice's file and cpuset, its services' pinning and its kubelet's
// manager settings.
func (f *Fixture) SetSliceCPUs(partition, cpus string) {
	set := bitmask.MustParseCPUList(cpus)
	for i, u := range f.Bundle.Units {
		if u.Partition != partition {
			continue
		}
		File := f.File(u.Name)
		lines := strings.Split(string(File.Content), "\n")
		for j, l := range lines {
			for _, key := range []string{"AllowedCPUs=", "CPUAffinity="} {
				if strings.HasPrefix(l, key) {
					lines[j] = key + set.String()
				}
			}
		}
		File.Content = []byte(strings.Join(lines, "\n"))
		if u.Cpuset != nil {
			f.Bundle.Units[i].Cpuset = &bundle.Cpuset{CPUs: set, Mems: u.Cpuset.Mems}
		}
		if u.KubeletState != nil {
			f.Bundle.Units[i].KubeletState = &bundle.KubeletState{Dir: u.KubeletState.Dir, Settings: KubeletSettings(set)}
		}
	}
}

// File returns a bundle file for editing.
func (f *Fixture) File(name string) *bundle.File {
	for i := range f.Bundle.Files {
		if strings.HasSuffix(f.Bundle.Files[i].Path, "/"+name) {
			return &f.Bundle.Files[i]
		}
	}
	panic("no File " + name)
}

// Must fails t on err.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
