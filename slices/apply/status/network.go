package status

import (
	"slices"

	"github.com/vishvananda/netns"

	pnetns "github.com/numa-partition/numa-partition/slices/netns"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// network reads partition p's namespace as the kernel has it, and
// reports a missing namespace or a wrong address as a problem.
func (r *statusRun) network(p record.Partition) *NetworkStatus {
	n := p.Network
	ns := &NetworkStatus{Namespace: n.Namespace, Interface: n.Interface, Address: n.Address.String(), Addresses: []string{}}
	h, done, err := host.NetnsHost(r.o.Root, netns.None())
	if err != nil {
		r.problem("network namespace %s of %s: %v", n.Namespace, p.Name, err)
		return ns
	}
	defer done()
	var names []string
	for _, d := range n.Devices {
		names = append(names, d.Name)
	}
	st, err := h.Inspect(pnetns.Partition{Namespace: n.Namespace, Interface: n.Interface, Devices: names})
	if err != nil {
		r.problem("network namespace %s of %s: %v", n.Namespace, p.Name, err)
		return ns
	}
	ns.Present, ns.Up = st.Namespace, st.Link && st.Up
	for _, a := range st.Addresses {
		ns.Addresses = append(ns.Addresses, a.String())
	}
	for _, d := range n.Devices {
		in := slices.Contains(st.Devices, d.Name)
		ns.Devices = append(ns.Devices, DeviceStatus{Name: d.Name, PCI: d.PCI, InNamespace: in})
		if st.Namespace && !in {
			r.drift("device %s (%s) of partition %s is not in namespace %s: on the host, renamed, or in a pod's namespace (netns-%s.service moves it in when it starts)", d.Name, d.PCI, p.Name, n.Namespace, p.Name)
		}
	}
	switch {
	case !st.Namespace:
		r.problem("network namespace %s of %s is missing (netns-%s.service makes it)", n.Namespace, p.Name, p.Name)
	case !ns.Up:
		r.problem("network namespace %s of %s: %s is missing or down", n.Namespace, p.Name, n.Interface)
	case len(ns.Addresses) != 1 || ns.Addresses[0] != ns.Address:
		r.drift("%s in namespace %s has addresses %v, applied %s", n.Interface, n.Namespace, ns.Addresses, ns.Address)
	}
	return ns
}
