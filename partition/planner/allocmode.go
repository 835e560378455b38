package planner

import (
	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// NRIPluginName names partition's allocator at its containerd's NRI,
// unique on the host.
func NRIPluginName(partition string) string { return "numa-partition-" + partition }

// kubeletMaxNUMANodes is also where allocator.mode = "auto" switches from
// kubelet's managers to the allocator's.

// planAllocatorModes chooses who places each partition's containers. In
// nri mode the allocator decides through containerd's NRI, so kubelet's
// CPU, Memory and Topology Managers are rendered off and the configured
// topology policy becomes the allocator's.
func (pl *planning) planAllocatorModes() {
	c, plan, perPart, col := pl.c, pl.plan, pl.perPart, pl.col
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		key, mode := "allocator.mode", c.Allocator.Mode
		if o := perPart[i].p; o != nil && o.AllocatorMode != "" {
			key, mode = perPart[i].pre+"allocator_mode", o.AllocatorMode
		}
		switch mode {
		case "", config.AllocatorModeAuto:
			mode = config.AllocatorModeKubelet
			if p.Nodes.Len() > kubeletMaxNUMANodes {
				mode = config.AllocatorModeNRI
			}
		case config.AllocatorModeKubelet, config.AllocatorModeNRI:
		default:
			col.Add(key, "%q: allowed are %q, %q and %q", mode, config.AllocatorModeAuto, config.AllocatorModeKubelet, config.AllocatorModeNRI)
			continue
		}
		a, kl := &p.Allocator, &p.Kubelet
		a.Mode = mode
		if p.Runtime.Kind == RuntimeContainerd {
			a.NRISocket = hostpaths.NRISocket(p.Runtime.StateDir)
			a.NRIPlugin = NRIPluginName(p.Name)
		} else if mode == config.AllocatorModeNRI {
			col.Add(key, "partition %s: nri mode plugs into the partition's own containerd; set runtime.mode = %q", p.Name, config.RuntimeModeContainerd)
			continue
		}
		if mode != config.AllocatorModeNRI {
			continue
		}
		a.TopologyPolicy, a.TopologyScope, a.TopologyOptions = kl.TopologyManagerPolicy, kl.TopologyManagerScope, copyMap(kl.TopologyManagerOptions)
		kl.CPUManagerPolicy, kl.MemoryManagerPolicy = "none", "None"
		kl.TopologyManagerPolicy, kl.TopologyManagerScope = "none", config.DefaultTopologyManagerScope
		kl.CPUManagerPolicyOptions, kl.TopologyManagerOptions = nil, nil
	}
}
