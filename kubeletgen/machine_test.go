package kubeletgen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

func onCgroup(plan planner.Plan, m cgroupmode.Mode) planner.Plan {
	plan.Host.CgroupMode = m
	return plan
}

// hostOnNode0 is twoNodes where the host keeps CPU 0 alone: node1's
// nodes hold no host CPU.
func hostOnNode0(plan planner.Plan) planner.Plan {
	plan.Host.ReservedCPUs = bitmask.MustParseCPUList("0")
	p := &plan.Partitions[1]
	p.CPUs, p.HostReservedCPUs = bitmask.MustParseCPUList("4-7"), bitmask.CPUSet{}
	return plan
}

func TestMachineOf(t *testing.T) {
	for _, c := range []struct {
		name      string
		plan      planner.Plan
		edit      func(*planner.Partition)
		partition bool
		cpus      string
		nodes     []int
		reserved  string // reservedSystemCPUs
		shownHost string // ShownHostCPUs
		why       string
	}{
		{name: "own nodes, own host CPU", plan: withPageSizes(twoNodes()),
			partition: true, cpus: "4-7", nodes: []int{1}, reserved: "4"},
		{name: "static, no host CPU on its nodes: its nodes, the host's CPU shown there", plan: hostOnNode0(withPageSizes(twoNodes())),
			partition: true, cpus: "0,4-7", nodes: []int{1}, reserved: "0", shownHost: "0"},
		{name: "static, no host CPU on its nodes, on cgroup v2 too", plan: onCgroup(hostOnNode0(withPageSizes(twoNodes())), cgroupmode.V2),
			partition: true, cpus: "0,4-7", nodes: []int{1}, reserved: "0", shownHost: "0"},
		{name: "static, the host reserves no CPU: the machine", plan: func() planner.Plan {
			plan := hostOnNode0(withPageSizes(twoNodes()))
			plan.Host.ReservedCPUs = bitmask.CPUSet{}
			return plan
		}(), cpus: "0-7", nodes: []int{0, 1}, reserved: "0-3", why: "the host reserves no CPU"},
		{name: "none policy needs no reserved CPU", plan: withPageSizes(twoNodes()),
			edit: func(p *planner.Partition) {
				p.HostReservedCPUs, p.CPUs = bitmask.CPUSet{}, bitmask.MustParseCPUList("4-7")
				p.Kubelet.CPUManagerPolicy = "none"
			},
			partition: true, cpus: "4-7", nodes: []int{1}, reserved: ""},
		{name: "page sizes unknown, pages planned: the machine", plan: twoNodes(planner.HugepagePlan{PageSize: 2 * mi, Count: 8}),
			cpus: "0-7", nodes: []int{0, 1}, reserved: "0-4", why: "hugepage sizes"},
		{name: "no hugetlb at all: no pools to show", plan: twoNodes(),
			partition: true, cpus: "4-7", nodes: []int{1}, reserved: "4"},
		{name: "hybrid is v1 for kubelet", plan: onCgroup(withPageSizes(twoNodes()), cgroupmode.Hybrid),
			partition: true, cpus: "4-7", nodes: []int{1}, reserved: "4"},
		{name: "cgroup v2: its own nodes too (openat2 hidden from kubelet)", plan: onCgroup(withPageSizes(twoNodes()), cgroupmode.V2),
			partition: true, cpus: "4-7", nodes: []int{1}, reserved: "4"},
		{name: "cgroup mode not known to this version: the machine", plan: onCgroup(withPageSizes(twoNodes()), "cgroup3"),
			cpus: "0-7", nodes: []int{0, 1}, reserved: "0-4", why: `cgroup mode "cgroup3"`},
		{name: "cgroup mode unknown: the machine", plan: onCgroup(withPageSizes(twoNodes()), ""),
			cpus: "0-7", nodes: []int{0, 1}, reserved: "0-4", why: "do not say the cgroup mode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := c.plan
			p := &plan.Partitions[1]
			if c.edit != nil {
				c.edit(p)
			}
			m, err := MachineOf(&plan, p)
			require.NoError(t, err)
			assert.Equal(t, c.partition, m.Partition)
			assert.Equal(t, c.cpus, m.CPUs.String())
			assert.Equal(t, c.shownHost, m.ShownHostCPUs.String())
			var ids []int
			for _, n := range m.Nodes {
				ids = append(ids, n.Node)
			}
			assert.Equal(t, c.nodes, ids)
			if c.why == "" {
				assert.Empty(t, m.WholeMachineWhy)
			} else {
				assert.Contains(t, m.WholeMachineWhy, c.why)
			}
			reserved, err := ReservedSystemCPUs(m, p)
			require.NoError(t, err)
			assert.Equal(t, c.reserved, reserved.String())
			// Whatever it is shown, the Node offers the partition's share.
			r, err := Resources(&plan, p)
			require.NoError(t, err)
			assert.Equal(t, r.Share["cpu"], r.Allocatable["cpu"])
			assert.Equal(t, r.Share["memory"], r.Allocatable["memory"])
			assert.Equal(t, m.WholeMachineWhy, r.WholeMachine, "plan's report says why")
			if !m.Partition {
				return
			}
			// Shown its partition, it reserves on its own node only, and
			// systemReserved is the plan's; on v2, where the host's memory
			// is not in its usage, it is in the eviction threshold instead.
			assert.Empty(t, r.Mismatches)
			c, err := Config(&plan, p)
			require.NoError(t, err)
			assert.Equal(t, plan.Host.CgroupMode == cgroupmode.V2, m.HostMemoryUnseen)
			if m.HostMemoryUnseen {
				assert.Equal(t, map[string]string{"memory": "0"}, c.SystemReserved)
				assert.Equal(t, "600Mi", c.EvictionHard["memory.available"])
			} else {
				assert.Equal(t, map[string]string{"memory": "500Mi"}, c.SystemReserved)
				assert.Equal(t, "100Mi", c.EvictionHard["memory.available"])
			}
			require.Len(t, c.ReservedMemory, 1)
			assert.Equal(t, int32(1), c.ReservedMemory[0].NumaNode)
			assert.Equal(t, "1100Mi", c.ReservedMemory[0].Limits.Memory().String())
		})
	}
}
