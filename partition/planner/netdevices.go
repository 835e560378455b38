package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// NetDevice is a network interface of a PCI function that a partition's
// namespace holds: its oneshot moves it in before containerd starts and
// back to the host's namespace when it stops.
type NetDevice struct {
	Name string `json:"name"`
	PCI  string `json:"pci"`
	// PhysFn is the physical function of an SR-IOV virtual function.
	PhysFn string `json:"physfn,omitempty"`
	// Node is the function's NUMA node, -1 when the firmware does not say
	// (possible for a device listed by hand only).
	Node int `json:"node"`
}

// netCandidate is a network interface of a PCI function, as discovery
// saw it in the host's namespace or the host facts in a partition's.
type netCandidate struct {
	NetDevice
	master    string // the bridge or bond it is a port of
	namespace string // the named namespace it is in, "" for the host's
}

// netCandidates are the interfaces of every PCI function of the
// topology: those sysfs showed, and those the host facts found in a
// namespace of numa-partition's (np-*), where sysfs read in the host's
// namespace does not show them (a re-plan while the partitions run).
func netCandidates(t *numa.Topology, ifaces []Interface) []netCandidate {
	var out []netCandidate
	fn := map[string]numa.PCIDevice{}
	for _, d := range t.PCI {
		fn[d.Address] = d
		for _, n := range d.Net {
			out = append(out, netCandidate{NetDevice: NetDevice{Name: n.Name, PCI: d.Address, PhysFn: d.PhysFn, Node: d.Node}, master: n.Master})
		}
	}
	for _, i := range ifaces {
		d, ok := fn[i.PCI]
		if !ok || i.Namespace == "" || !strings.HasPrefix(i.Namespace, NamespaceOf("")) {
			continue
		}
		if slices.ContainsFunc(out, func(c netCandidate) bool { return c.PCI == i.PCI && c.Name == i.Name }) {
			continue
		}
		out = append(out, netCandidate{NetDevice: NetDevice{Name: i.Name, PCI: d.Address, PhysFn: d.PhysFn, Node: d.Node}, namespace: i.Namespace})
	}
	return out
}

// planLocalDevices decides which network devices each partition's
// namespace holds: with network.local_devices every interface of a PCI
// function on one of the partition's NUMA nodes (SR-IOV VFs included),
// and the interfaces or PCI functions of partition[].local_devices. A
// device that carries the host's own network (uplinkReason) never
// leaves it: listed by hand it is an error, found by locality it stays
// with the host and a warning says so.
func (pl *planning) planLocalDevices(ifaces []Interface) {
	c, col, plan := pl.c.Network, pl.col, pl.plan
	cands := netCandidates(pl.m.t, ifaces)
	for _, h := range c.HostDevices {
		if !numa.IsPCIAddress(h) && validation.InterfaceNameProblem(h) != "" {
			col.Add("network.host_devices", "%q is neither an interface name nor a PCI address (0000:3b:00.1)", h)
		}
	}
	a := &deviceAssignment{pl: pl, owner: map[string]int{}, ownerKey: map[string]string{}, byName: map[string]Interface{}}
	for _, i := range ifaces {
		if i.Namespace == "" {
			a.byName[i.Name] = i
		}
	}
	if c.LocalDevices != nil && *c.LocalDevices {
		a.byLocality(cands)
	}
	for i := range plan.Partitions {
		s, p := pl.perPart[i], &plan.Partitions[i]
		if s.p == nil || p.Network == nil {
			continue
		}
		for _, entry := range s.p.LocalDevices {
			a.listed(i, s.pre+"local_devices", entry, cands)
		}
	}
	for i := range plan.Partitions {
		if pn := plan.Partitions[i].Network; pn != nil {
			slices.SortFunc(pn.Devices, func(a, b NetDevice) int { return strings.Compare(a.PCI+"/"+a.Name, b.PCI+"/"+b.Name) })
		}
	}
}

// deviceAssignment gives devices to the partitions' namespaces, each to
// one only.
type deviceAssignment struct {
	pl       *planning
	owner    map[string]int    // PCI/name → partition index
	ownerKey map[string]string // → the key that gave it
	byName   map[string]Interface
}

// partitionOf is the index of the partition holding node, -1 for none.
func (a *deviceAssignment) partitionOf(node int) int {
	for i, p := range a.pl.plan.Partitions {
		if p.Nodes.Has(node) {
			return i
		}
	}
	return -1
}

// give moves d into partition i's namespace, or says whose it is already.
func (a *deviceAssignment) give(i int, d netCandidate, key string) {
	plan := a.pl.plan
	id := d.PCI + "/" + d.Name
	if j, ok := a.owner[id]; ok {
		if j != i {
			a.pl.col.Add(key, "%q (%s) is already partition %s's (%s): a device can be in one namespace only", d.Name, d.PCI, plan.Partitions[j].Name, a.ownerKey[id])
		}
		return
	}
	a.owner[id], a.ownerKey[id] = i, key
	pn := plan.Partitions[i].Network
	pn.Devices = append(pn.Devices, d.NetDevice)
}

// byLocality gives every candidate on a partition's node to that
// partition (network.local_devices), but those carrying the host's own
// network.
func (a *deviceAssignment) byLocality(cands []netCandidate) {
	plan := a.pl.plan
	for _, d := range cands {
		i := a.partitionOf(d.Node)
		if d.Node < 0 || i < 0 || plan.Partitions[i].Network == nil {
			continue
		}
		if why := a.pl.uplinkReason(d, a.byName, plan.Partitions[i].Network); why != "" {
			a.pl.warn("network.local_devices: %s (%s, NUMA node %d) stays in the host's namespace: %s", d.Name, d.PCI, d.Node, why)
			continue
		}
		a.give(i, d, "network.local_devices")
	}
}

// listed gives partition i the candidates entry of its local_devices
// (at key) names, when they are on its nodes and may leave the host.
func (a *deviceAssignment) listed(i int, key, entry string, cands []netCandidate) {
	pl, plan, col := a.pl, a.pl.plan, a.pl.col
	p := &plan.Partitions[i]
	matched := slices.DeleteFunc(slices.Clone(cands), func(d netCandidate) bool { return d.Name != entry && d.PCI != entry })
	if len(matched) == 0 {
		col.Add(key, "%q: %s", entry, config.Whole(pl.noSuchDevice(entry, cands)))
		return
	}
	for _, d := range matched {
		if why := pl.uplinkReason(d, a.byName, p.Network); why != "" {
			col.Add(key, "%q (%s) cannot leave the host's namespace: %s", d.Name, d.PCI, config.Whole(why))
			continue
		}
		switch j := a.partitionOf(d.Node); {
		case d.Node < 0:
			pl.warn("%s: %s (%s) has no NUMA locality (numa_node -1): moved into partition %s's namespace as listed", key, d.Name, d.PCI, p.Name)
		case j < 0:
			col.Add(key, "%q (%s) is on NUMA node %d, which no partition holds: list it in the partition of its node, or leave it to the host", entry, d.PCI, d.Node)
			continue
		case j != i:
			col.Add(key, "%q (%s) is on NUMA node %d, partition %s's: a partition's devices are on its own nodes %s", entry, d.PCI, d.Node, plan.Partitions[j].Name, p.Nodes)
			continue
		}
		a.give(i, d, key)
	}
}

// uplinkReason says why device d must stay in the host's namespace, ""
// when it may move into pn's: network.host_devices lists it, it is the
// macvlan uplink's parent, a port
// of a bridge or bond (moving it breaks its master), it has an address
// of the host or the host's default route leaves by it, it has the
// name of the partition's own link in the namespace, or a name no unit
// line carries.
func (pl *planning) uplinkReason(d netCandidate, host map[string]Interface, pn *PartitionNetwork) string {
	if slices.Contains(pl.c.Network.HostDevices, d.Name) || slices.Contains(pl.c.Network.HostDevices, d.PCI) {
		return "network.host_devices keeps it"
	}
	if msg := validation.InterfaceNameProblem(d.Name); msg != "" {
		// Linux takes names with '$', '%' or quotes, which the
		// namespace's oneshot could not carry on its command line
		// (a plan file's are held to the same rule: planNetworkProblem).
		return "its name " + msg
	}
	if d.namespace != "" {
		return "" // a partition's already: the host's addresses and routes are not its
	}
	i := host[d.Name]
	switch {
	case d.Name == pl.plan.Network.Parent:
		return "it is network.parent, the NIC of the partitions' macvlans"
	case d.master != "":
		return fmt.Sprintf("it is a port of %s, which it would leave", d.master)
	case i.DefaultRoute:
		return "the host's default route leaves by it"
	case len(i.Addresses) > 0:
		return fmt.Sprintf("it has the host's address %s", i.Addresses[0])
	case d.Name == pn.Interface:
		return fmt.Sprintf("it has the name of the partition's own link in its namespace (%s)", pn.Interface)
	}
	return ""
}

// noSuchDevice says what a local_devices entry that matches nothing
// should have been.
func (pl *planning) noSuchDevice(entry string, cands []netCandidate) string {
	if numa.IsPCIAddress(entry) {
		if slices.ContainsFunc(pl.m.t.PCI, func(d numa.PCIDevice) bool { return d.Address == entry }) {
			return "this PCI function has no network interface (no netdev driver, or bound to vfio-pci): only network interfaces move into a namespace"
		}
		return "the host has no such PCI function"
	}
	names := make([]string, 0, len(cands))
	for _, d := range cands {
		names = append(names, d.Name)
	}
	if len(names) == 0 {
		return "the host has no network interface of a PCI function (the topology lists none); allowed are interface names and PCI addresses (0000:3b:00.1)"
	}
	const shown = 20
	more := ""
	if len(names) > shown {
		names, more = names[:shown], fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return fmt.Sprintf("no network interface of a PCI function has this name; allowed are interface names and PCI addresses (0000:3b:00.1), the host's are %s%s", strings.Join(names, ", "), more)
}
