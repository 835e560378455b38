package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/internal/echo"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// Network modes.
const (
	// NetworkNamespace gives every partition a network namespace and an
	// address of its own: to the cluster's add-ons each partition is a
	// machine (kube-proxy, the CNI and hostNetwork agents run once per
	// partition, each in its own namespace, as kind gives each Node).
	NetworkNamespace = "namespace"
	// NetworkHost keeps every partition in the host's one namespace and
	// address (the layout before namespaces; docs/network.md lists what
	// breaks in it).
	NetworkHost = "host"
)

// Uplinks: how a partition's namespace reaches the host's network.
const (
	// UplinkBridge: a veth per partition on a bridge of the host, which
	// routes (and, with nat, masquerades) for the partitions.
	UplinkBridge = "bridge"
	// UplinkMacvlan: a macvlan per partition on a NIC of the host, with an
	// address on that NIC's network.
	UplinkMacvlan = "macvlan"
)

// PartitionInterface is the link's name inside each namespace.
const PartitionInterface = "eth0"

// Network is the plan's network layout, the same for every partition.
type Network struct {
	Mode string `json:"mode"` // NetworkNamespace or NetworkHost
	// The rest is empty in host mode.
	Uplink string       `json:"uplink,omitempty"`
	Bridge string       `json:"bridge,omitempty"` // bridge uplink
	Parent string       `json:"parent,omitempty"` // macvlan uplink
	Subnet netip.Prefix `json:"subnet,omitzero"`
	// HostAddress is the bridge's address, the partitions' gateway.
	HostAddress netip.Prefix `json:"hostAddress,omitzero"`
	// NAT masquerades the subnet's traffic leaving the host by another
	// interface than the bridge.
	NAT        bool   `json:"nat,omitempty"`
	MTU        int    `json:"mtu,omitempty"` // 0: the uplink's
	ResolvConf string `json:"resolvConf,omitempty"`
}

// PartitionNetwork is one partition's namespace and address.
type PartitionNetwork struct {
	Namespace string       `json:"namespace"` // under /run/netns
	HostLink  string       `json:"hostLink"`  // the host end of its veth (or the macvlan before it moves)
	Interface string       `json:"interface"` // inside the namespace
	Address   netip.Prefix `json:"address"`   // the Node's InternalIP, with the subnet's length
	Gateway   netip.Addr   `json:"gateway,omitzero"`
	// Devices are the host's network interfaces that move into the
	// namespace while it exists (network.local_devices,
	// partition[].local_devices), ascending by PCI address.
	Devices []NetDevice `json:"devices,omitempty"`
}

// NamespaceOf is a partition's network namespace name.
func NamespaceOf(partition string) string { return "np-" + partition }

// HostLinkOf is the host-side link name of a partition: the kernel allows
// 15 bytes, so long partition names are shortened to a digest.
func HostLinkOf(partition string) string {
	if n := "np-" + partition; len(n) <= 15 {
		return n
	}
	sum := sha256.Sum256([]byte(partition))
	return "np-" + hex.EncodeToString(sum[:])[:12]
}

// planNetwork decides the namespace, link and address of every partition.
func (pl *planning) planNetwork() {
	c, col, plan := pl.c.Network, pl.col, pl.plan
	mode := or(c.Mode, NetworkNamespace)
	plan.Network = Network{Mode: mode}
	switch mode {
	case NetworkHost:
		pl.hostModeProblems()
		return
	case NetworkNamespace:
	default:
		col.Add("network.mode", "%q: allowed are %q (a network namespace and address per partition) and %q (the host's, shared)", c.Mode, NetworkNamespace, NetworkHost)
		return
	}
	if pl.c.Runtime.Mode == config.RuntimeModeShared {
		col.Add("runtime.mode", "%q: network.mode = %q needs each partition's own containerd, which runs in the partition's namespace (or set network.mode = %q)", config.RuntimeModeShared, NetworkNamespace, NetworkHost)
	}
	n := &plan.Network
	n.Uplink = or(c.Uplink, UplinkBridge)
	n.MTU = c.MTU
	if msg := mtuProblem(c.MTU); msg != "" {
		col.Add("network.mtu", "%s", config.Whole(msg))
	}
	n.ResolvConf = or(c.ResolvConf, config.DefaultResolvConf)
	if msg := validation.PathProblem(n.ResolvConf); msg != "" {
		col.Add("network.resolv_conf", "%q %s", n.ResolvConf, config.Whole(msg))
	}
	all := pl.interfaces()
	ifaces := slices.DeleteFunc(slices.Clone(all), func(i Interface) bool { return i.Namespace != "" })
	switch n.Uplink {
	case UplinkBridge:
		pl.bridgeUplink(n)
	case UplinkMacvlan:
		pl.macvlanUplink(n, ifaces)
	default:
		col.Add("network.uplink", "%s", config.Whole(uplinkProblem(c.Uplink)))
		return
	}
	if !n.Subnet.IsValid() || (n.Uplink == UplinkBridge && pl.bridgeSubnetTaken(n, ifaces)) {
		return
	}
	gateway := pl.gateway(n)
	if n.Uplink == UplinkBridge {
		n.HostAddress = netip.PrefixFrom(gateway, n.Subnet.Bits())
	}
	pl.assignAddresses(n, gateway, ifaces)
	pl.planLocalDevices(all)
}

// hostModeProblems refuses, in mode host, the keys that need namespaces.
func (pl *planning) hostModeProblems() {
	c, col := pl.c.Network, pl.col
	for _, k := range []struct{ key, v string }{{"uplink", c.Uplink}, {"bridge", c.Bridge}, {"parent", c.Parent}, {"subnet", c.Subnet}, {"gateway", c.Gateway}, {"pool", c.Pool}} {
		if k.v != "" {
			col.Add("network."+k.key, "is set, but network.mode = %q has no namespaces to connect; remove it or use mode = %q", NetworkHost, NetworkNamespace)
		}
	}
	for i, p := range pl.c.Partitions {
		if p.Address != "" {
			col.Add(fmt.Sprintf("partition[%d].address", i), "needs network.mode = %q (in mode %q every partition has the host's address)", NetworkNamespace, NetworkHost)
		}
		if len(p.LocalDevices) > 0 {
			col.Add(fmt.Sprintf("partition[%d].local_devices", i), "needs network.mode = %q: in mode %q there is no namespace to move them into", NetworkNamespace, NetworkHost)
		}
	}
	if c.LocalDevices != nil && *c.LocalDevices {
		col.Add("network.local_devices", "needs network.mode = %q: in mode %q there is no namespace to move them into", NetworkNamespace, NetworkHost)
	}
}

// bridgeUplink plans the bridge uplink: its name, NAT and subnet.
func (pl *planning) bridgeUplink(n *Network) {
	c, col := pl.c.Network, pl.col
	n.Bridge = or(c.Bridge, config.DefaultBridge)
	if msg := validation.InterfaceNameProblem(n.Bridge); msg != "" {
		col.Add("network.bridge", "%q %s", n.Bridge, config.Whole(msg))
	}
	if c.Parent != "" {
		col.Add("network.parent", "is for uplink = %q; a bridge uplink routes through the host's own routes", UplinkMacvlan)
	}
	n.NAT = c.NAT == nil || *c.NAT
	n.Subnet = pl.prefix("network.subnet", or(c.Subnet, config.DefaultBridgeSubnet))
}

// macvlanUplink plans the macvlan uplink: its parent, one of the host's
// interfaces ifaces, and the subnet of the parent's network.
func (pl *planning) macvlanUplink(n *Network, ifaces []Interface) {
	c, col := pl.c.Network, pl.col
	n.Parent = c.Parent
	switch {
	case c.Parent == "":
		col.Add("network.parent", "is required with uplink = %q: the NIC whose network the partitions' addresses are on", UplinkMacvlan)
	case validation.InterfaceNameProblem(c.Parent) != "":
		col.Add("network.parent", "%q %s", c.Parent, config.Whole(validation.InterfaceNameProblem(c.Parent)))
	case ifaces != nil && !hasInterface(ifaces, c.Parent):
		col.Add("network.parent", "%q: the host has no such interface (it has %s)", c.Parent, config.Whole(interfaceNames(ifaces)))
	}
	if c.Bridge != "" {
		col.Add("network.bridge", "is for uplink = %q", UplinkBridge)
	}
	if c.NAT != nil && *c.NAT {
		col.Add("network.nat", "is for uplink = %q: macvlan addresses are on the NIC's own network", UplinkBridge)
	}
	if c.Subnet == "" {
		col.Add("network.subnet", "is required with uplink = %q: the network of %s, e.g. \"192.168.10.0/24\"", UplinkMacvlan, or(c.Parent, "the parent NIC"))
	} else {
		n.Subnet = pl.prefix("network.subnet", c.Subnet)
	}
}

// bridgeSubnetTaken refuses a bridge subnet that overlaps an address of
// one of the host's interfaces ifaces (other than the bridge itself).
func (pl *planning) bridgeSubnetTaken(n *Network, ifaces []Interface) bool {
	for _, i := range ifaces {
		for _, a := range i.Addresses {
			if i.Name != n.Bridge && a.Masked().Overlaps(n.Subnet) {
				pl.col.Add("network.subnet", "%s overlaps %s of the host's interface %s: the bridge's network must be one the host does not route elsewhere", n.Subnet, a, i.Name)
				return true
			}
		}
	}
	return false
}

// mtuProblem says what is wrong with network.mtu, "" when nothing.
func mtuProblem(mtu int) string {
	if mtu != 0 && (mtu < 68 || mtu > 65535) {
		return fmt.Sprintf("%d: allowed are 0 (the uplink's) and 68-65535", mtu)
	}
	return ""
}

// uplinkProblem says what is wrong with network.uplink, "" when nothing.
func uplinkProblem(uplink string) string {
	if uplink == UplinkBridge || uplink == UplinkMacvlan {
		return ""
	}
	return fmt.Sprintf("%q: allowed are %q (a veth per partition on a host bridge) and %q (a macvlan per partition on network.parent)", echo.Value(uplink), UplinkBridge, UplinkMacvlan)
}

// planNetworkProblem holds a plan file's network to the rules planNetwork
// made it by, "" when it meets them: every partition has a namespace of
// its own in namespace mode and none in another; the uplink, the bridge
// or parent, the host's address, the NAT's subnet and the MTU are what
// the config allows; each namespace, link and device name is one the
// kernel and a unit's command line take (validation.NamespaceNameProblem,
// InterfaceNameProblem), each address an IPv4 address with its length and
// each device's PCI function an address as discovery reads them. Render
// writes all of them into the network oneshots' command lines and
// comments.
func planNetworkProblem(plan *Plan) string {
	n := plan.Network
	namespaced := n.Mode == NetworkNamespace
	if namespaced {
		if msg := uplinkProblem(n.Uplink); msg != "" {
			return "network.uplink " + msg
		}
		switch n.Uplink {
		case UplinkBridge:
			if msg := validation.InterfaceNameProblem(n.Bridge); msg != "" {
				return fmt.Sprintf("network.bridge %q %s", echo.Value(n.Bridge), msg)
			}
			if msg := ipv4PrefixProblem(n.HostAddress); msg != "" {
				return "network.hostAddress " + msg
			}
			if msg := ipv4PrefixProblem(n.Subnet); n.NAT && msg != "" {
				return "network.subnet " + msg
			}
		case UplinkMacvlan:
			if msg := validation.InterfaceNameProblem(n.Parent); msg != "" {
				return fmt.Sprintf("network.parent %q %s", echo.Value(n.Parent), msg)
			}
		}
		if msg := mtuProblem(n.MTU); msg != "" {
			return "network.mtu " + msg
		}
	}
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		pn := p.Network
		switch {
		case pn == nil && namespaced:
			return fmt.Sprintf("partition %s has no network, but network.mode is %q (allowed: a network for every partition, or network.mode %q)", p.Name, NetworkNamespace, NetworkHost)
		case pn == nil:
			continue
		case !namespaced:
			return fmt.Sprintf("partition %s: a network is planned, but network.mode is %q (allowed: a partition's own network with network.mode %q only)", p.Name, echo.Value(n.Mode), NetworkNamespace)
		}
		if msg := validation.NamespaceNameProblem(pn.Namespace); msg != "" {
			return fmt.Sprintf("partition %s: network.namespace %q %s", p.Name, echo.Value(pn.Namespace), msg)
		}
		for _, l := range []struct{ key, name string }{{"network.hostLink", pn.HostLink}, {"network.interface", pn.Interface}} {
			if msg := validation.InterfaceNameProblem(l.name); msg != "" {
				return fmt.Sprintf("partition %s: %s %q %s", p.Name, l.key, echo.Value(l.name), msg)
			}
		}
		if msg := ipv4PrefixProblem(pn.Address); msg != "" {
			return fmt.Sprintf("partition %s: network.address %s", p.Name, msg)
		}
		for _, d := range pn.Devices {
			if msg := validation.InterfaceNameProblem(d.Name); msg != "" {
				return fmt.Sprintf("partition %s: network.devices name %q %s", p.Name, echo.Value(d.Name), msg)
			}
			if !numa.IsPCIAddress(d.PCI) || d.PhysFn != "" && !numa.IsPCIAddress(d.PhysFn) {
				return fmt.Sprintf("partition %s: network.devices %s: pci %q, physfn %q: allowed are PCI function addresses (0000:3b:00.1; physfn may be empty)", p.Name, echo.Value(d.Name), echo.Value(d.PCI), echo.Value(d.PhysFn))
			}
		}
	}
	return ""
}

// ipv4PrefixProblem says what is wrong with an address of a plan's
// network, which the planner makes an IPv4 address with its network's
// length, "" when nothing.
func ipv4PrefixProblem(a netip.Prefix) string {
	if a.IsValid() && a.Addr().Is4() {
		return ""
	}
	return fmt.Sprintf("%q: allowed is an IPv4 address with its network's length (10.212.0.2/24)", a.String())
}

// prefix parses an IPv4 network ("10.212.0.0/24"): its host bits must be
// zero and it must leave room for a gateway and a partition.
func (pl *planning) prefix(key, v string) netip.Prefix {
	p, err := netip.ParsePrefix(v)
	switch {
	case err != nil:
		pl.col.Add(key, "%q is not a network like \"10.212.0.0/24\"", v)
	case !p.Addr().Is4():
		pl.col.Add(key, "%q: only IPv4 networks are supported", v)
	case p.Masked() != p:
		pl.col.Add(key, "%q has host bits set: the network is %q", v, p.Masked())
	case p.Bits() > 30:
		pl.col.Add(key, "%q is too small: a /30 is the smallest (a gateway and one partition)", v)
	default:
		return p
	}
	return netip.Prefix{}
}

// gateway is network.gateway, or for a bridge the subnet's first address.
func (pl *planning) gateway(n *Network) netip.Addr {
	c, col := pl.c.Network, pl.col
	if c.Gateway == "" {
		if n.Uplink == UplinkBridge {
			return n.Subnet.Addr().Next()
		}
		return netip.Addr{} // a macvlan without a default route
	}
	g, err := netip.ParseAddr(c.Gateway)
	switch {
	case err != nil || !g.Is4():
		col.Add("network.gateway", "%q is not an IPv4 address", c.Gateway)
	case !usable(n.Subnet, g):
		col.Add("network.gateway", "%s is not a host address of network.subnet %s", g, n.Subnet)
	default:
		return g
	}
	return netip.Addr{}
}

// assignAddresses gives every partition its namespace and address: its
// partition[].address, else the next free address of the pool.
func (pl *planning) assignAddresses(n *Network, gateway netip.Addr, ifaces []Interface) {
	c, col, plan := pl.c.Network, pl.col, pl.plan
	pool := n.Subnet
	if c.Pool != "" {
		if p := pl.prefix("network.pool", c.Pool); p.IsValid() {
			if !n.Subnet.Contains(p.Addr()) || p.Bits() < n.Subnet.Bits() {
				col.Add("network.pool", "%s is not inside network.subnet %s", p, n.Subnet)
				return
			}
			pool = p
		}
	}
	taken := map[netip.Addr]string{}
	if gateway.IsValid() {
		taken[gateway] = "network.gateway"
	}
	for _, i := range ifaces {
		for _, a := range i.Addresses {
			if n.Subnet.Contains(a.Addr()) && i.Name != n.Bridge {
				taken[a.Addr()] = "the host's interface " + i.Name
			}
		}
	}
	explicit := make([]netip.Addr, len(plan.Partitions))
	for i := range plan.Partitions {
		s := pl.perPart[i]
		if s.p == nil || s.p.Address == "" {
			continue
		}
		key := s.pre + "address"
		a, err := netip.ParseAddr(s.p.Address)
		switch {
		case err != nil || !a.Is4():
			col.Add(key, "%q is not an IPv4 address (without a length: network.subnet gives it)", s.p.Address)
		case !usable(n.Subnet, a):
			col.Add(key, "%s is not a host address of network.subnet %s", a, n.Subnet)
		case taken[a] != "":
			col.Add(key, "%s is already %s", a, taken[a])
		default:
			taken[a] = "the address of partition " + plan.Partitions[i].Name
			explicit[i] = a
		}
	}
	next := pool.Addr()
	var short []string
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		a := explicit[i]
		for !a.IsValid() && pool.Contains(next) {
			if usable(n.Subnet, next) && taken[next] == "" {
				a = next
			}
			next = next.Next()
		}
		if !a.IsValid() {
			short = append(short, p.Name)
			continue
		}
		taken[a] = "the address of partition " + p.Name
		p.Network = &PartitionNetwork{
			Namespace: NamespaceOf(p.Name), HostLink: HostLinkOf(p.Name), Interface: PartitionInterface,
			Address: netip.PrefixFrom(a, n.Subnet.Bits()), Gateway: gateway,
		}
	}
	if len(short) > 0 {
		key := "network.pool"
		if c.Pool == "" {
			key = "network.subnet"
		}
		col.Add(key, "%s has no free address left for partitions %s (%d partitions; the gateway, the host's addresses and the network and broadcast addresses are not handed out): use a larger one", pool, config.Whole(strings.Join(short, ", ")), len(plan.Partitions))
	}
}

// usable reports whether a is a host address of subnet (not its network
// or broadcast address).
func usable(subnet netip.Prefix, a netip.Addr) bool {
	if !subnet.Contains(a) || a == subnet.Addr() {
		return false
	}
	last := subnet.Addr().As4()
	hostBits := 32 - subnet.Bits()
	for i := 3; i >= 0 && hostBits > 0; i-- {
		n := min(hostBits, 8)
		last[i] |= byte(1<<n - 1)
		hostBits -= n
	}
	return a != netip.AddrFrom4(last)
}

// interfaces are the host's network interfaces (and those of the named
// namespaces, Interface.Namespace), nil when the facts do not say (plans of another machine): then nothing is checked against
// them.
func (pl *planning) interfaces() []Interface {
	nf, ok := pl.facts.(NetworkFacts)
	if !ok {
		return nil
	}
	ifaces, err := nf.Interfaces()
	if err != nil {
		pl.warn("the host's network interfaces could not be read (%v): addresses and network.parent are not checked against them", err)
		return nil
	}
	return ifaces
}

func hasInterface(ifaces []Interface, name string) bool {
	for _, i := range ifaces {
		if i.Name == name {
			return true
		}
	}
	return false
}

func interfaceNames(ifaces []Interface) string {
	names := make([]string, len(ifaces))
	for i, f := range ifaces {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}
