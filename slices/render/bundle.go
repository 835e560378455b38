// Package render renders a Plan into the files that partition the host:
// systemd slices, drop-ins, per-partition kubelet, containerd and allocator
// units, the hugepages oneshot, and (through kubeletgen) each kubelet's
// KubeletConfiguration, as a bundle.Bundle. Render is a pure function;
// `render` and `apply` use the same one.
package render

import (
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// PartitionsOf are plan's partitions as a bundle carries them.
func PartitionsOf(plan *planner.Plan) []bundle.Partition {
	out := []bundle.Partition{}
	for _, p := range plan.Partitions {
		kubeReserved := p.Kubelet.KubeReservedMemory
		out = append(out, bundle.Partition{Name: p.Name, Slice: p.Slice, Nodes: p.Nodes,
			CPUs: p.CPUs, KubeletHealthz: p.Kubelet.HealthzPort, AllocatorSocket: p.Allocator.Socket,
			NodeName: p.NodeName, Kubeconfig: p.Kubelet.Kubeconfig, Network: networkOf(p.Network),
			KubeReservedMemory: &kubeReserved, KubeletBinary: p.Kubelet.Binary, ContainerdBinary: p.Runtime.Binary})
	}
	return out
}

// networkOf is a partition's network as a bundle carries it.
func networkOf(n *planner.PartitionNetwork) *bundle.PartitionNetwork {
	if n == nil {
		return nil
	}
	out := &bundle.PartitionNetwork{Namespace: n.Namespace, HostLink: n.HostLink, Interface: n.Interface,
		Address: n.Address, Gateway: n.Gateway}
	for _, d := range n.Devices {
		out.Devices = append(out.Devices, bundle.NetDevice{Name: d.Name, PCI: d.PCI, PhysFn: d.PhysFn, Node: d.Node})
	}
	return out
}
