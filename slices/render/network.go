package render

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// UplinkUnit makes the host side of the partitions' network (namespace
// mode): the bridge, forwarding and NAT, or for macvlan a check that the
// parent NIC is there.
const UplinkUnit = "numa-partition-network.service"

// NetnsDir is where the partitions' named network namespaces are mounted
// (iproute2's directory: `ip netns exec np-node0 ...` works on them).
const NetnsDir = "/run/netns"

func netnsUnit(name string) string { return "netns-" + name + ".service" }

// netnsView is what a partition's daemons need to join its namespace;
// nil in host mode, where the templates leave the lines out.
type netnsView struct {
	Unit, Path string
}

func netnsOf(p *planner.Partition) *netnsView {
	if p.Network == nil {
		return nil
	}
	return &netnsView{Unit: netnsUnit(p.Name), Path: path.Join(NetnsDir, p.Network.Namespace)}
}

// uplinkArgs are the `numa-partition network uplink` flags of the plan's
// uplink: the unit's command line carries every fact, so what it does is
// readable in the unit and needs no other file.
func uplinkArgs(n planner.Network) []string {
	args := []string{"--uplink", n.Uplink, "--mtu", strconv.Itoa(n.MTU)}
	switch n.Uplink {
	case planner.UplinkBridge:
		args = append(args, "--bridge", n.Bridge, "--host-address", n.HostAddress.String())
		if n.NAT {
			args = append(args, "--nat", n.Subnet.String())
		}
	case planner.UplinkMacvlan:
		args = append(args, "--parent", n.Parent)
	}
	return args
}

// uplink renders the host's uplink oneshot.
func (r *renderer) uplink() error {
	n := r.plan.Network
	if n.Mode != planner.NetworkNamespace {
		return nil
	}
	if err := checkUplink(n); err != nil {
		return err
	}
	what := fmt.Sprintf("bridge %s %s", n.Bridge, n.HostAddress)
	if n.NAT {
		what += ", NAT for " + n.Subnet.String()
	}
	if n.Uplink == planner.UplinkMacvlan {
		what = "macvlans on " + n.Parent
	}
	args := uplinkArgs(n)
	p := unitPath(UplinkUnit)
	err := r.template(p, "uplink.service.tmpl", map[string]string{
		"What":      what,
		"ExecStart": strings.Join(append([]string{r.opt.Binary, "network", "uplink", "up"}, args...), " "),
		"ExecStop":  strings.Join(append([]string{r.opt.Binary, "network", "uplink", "down"}, args...), " "),
	})
	if err != nil {
		return err
	}
	r.units = append(r.units, Unit{Name: UplinkUnit, Phase: PhaseNetwork, Enable: true, Start: true, Files: []string{p}, RecreatesPods: true})
	r.network = &Network{Bridge: n.Bridge, NAT: n.NAT, Namespaces: []Namespace{}}
	return nil
}

// netns renders partition p's namespace oneshot.
func (r *renderer) netns(p *planner.Partition) error {
	pn := p.Network
	if pn == nil {
		if r.plan.Network.Mode == planner.NetworkNamespace {
			return fmt.Errorf("network mode %q but no network planned for the partition", planner.NetworkNamespace)
		}
		return nil
	}
	if r.network == nil {
		return fmt.Errorf("a network namespace is planned for the partition, but network.mode is %q", r.plan.Network.Mode)
	}
	// The namespace is a file in /run/netns, the links are interfaces
	// (IFNAMSIZ): the planner's rules for each.
	if msg := validation.NamespaceNameProblem(pn.Namespace); msg != "" {
		return fmt.Errorf("network.namespace %q %s", pn.Namespace, msg)
	}
	for _, n := range []struct{ field, v string }{{"network.hostLink", pn.HostLink}, {"network.interface", pn.Interface}} {
		if msg := validation.InterfaceNameProblem(n.v); msg != "" {
			return fmt.Errorf("%s %q %s", n.field, n.v, msg)
		}
	}
	if !pn.Address.IsValid() || !pn.Address.Addr().Is4() {
		return fmt.Errorf("network.address %q: want an IPv4 address with its length", pn.Address)
	}
	args := []string{"--namespace", pn.Namespace, "--host-link", pn.HostLink, "--interface", pn.Interface}
	var devices, deviceUnits, names []string
	for _, d := range pn.Devices {
		if msg := validation.InterfaceNameProblem(d.Name); msg != "" {
			return fmt.Errorf("network.devices %q %s", d.Name, msg)
		}
		args = append(args, "--device", d.Name)
		names = append(names, d.Name)
		what := fmt.Sprintf("%s (PCI %s", d.Name, d.PCI)
		if d.PhysFn != "" {
			what += ", a VF of " + d.PhysFn
		}
		if d.Node >= 0 {
			what += fmt.Sprintf(", NUMA node %d", d.Node)
		}
		devices = append(devices, what+")")
		deviceUnits = append(deviceUnits, interfaceDeviceUnit(d.Name))
	}
	up := append(append([]string{r.opt.Binary, "network", "up"}, args...), "--address", pn.Address.String())
	if pn.Gateway.IsValid() {
		up = append(up, "--gateway", pn.Gateway.String())
	}
	up = append(up, uplinkArgs(r.plan.Network)...)
	down := append([]string{r.opt.Binary, "network", "down"}, args...)
	unit := netnsUnit(p.Name)
	path := unitPath(unit)
	err := r.template(path, "netns.service.tmpl", map[string]any{
		"Name": p.Name, "Namespace": pn.Namespace, "Address": pn.Address.String(), "Uplink": UplinkUnit,
		"Devices": devices, "DeviceUnits": deviceUnits,
		"Before":    []string{containerdUnit(p.Name), kubeletUnit(p.Name), allocatorUnit(p.Name)},
		"ExecStart": strings.Join(up, " "), "ExecStop": strings.Join(down, " "),
	})
	if err != nil {
		return err
	}
	r.units = append(r.units, Unit{Name: unit, Phase: PhaseNetwork, Partition: p.Name, Enable: true, Start: true, Files: []string{path}, RecreatesPods: true})
	r.network.Namespaces = append(r.network.Namespaces, Namespace{Partition: p.Name, Name: pn.Namespace, HostLink: pn.HostLink, Interface: pn.Interface, Devices: names})
	return nil
}

// checkUplink refuses a plan read from a file whose uplink cannot become
// a unit's command line.
func checkUplink(n planner.Network) error {
	switch n.Uplink {
	case planner.UplinkBridge:
		if msg := validation.InterfaceNameProblem(n.Bridge); msg != "" {
			return fmt.Errorf("network.bridge %q %s", n.Bridge, msg)
		}
		if !n.HostAddress.IsValid() || !n.HostAddress.Addr().Is4() {
			return fmt.Errorf("network.hostAddress %q: want an IPv4 address with its length", n.HostAddress)
		}
	case planner.UplinkMacvlan:
		if msg := validation.InterfaceNameProblem(n.Parent); msg != "" {
			return fmt.Errorf("network.parent %q %s", n.Parent, msg)
		}
	default:
		return fmt.Errorf("network.uplink %q: allowed are %q and %q", n.Uplink, planner.UplinkBridge, planner.UplinkMacvlan)
	}
	if n.MTU < 0 || n.MTU > 65535 {
		return fmt.Errorf("network.mtu %d: allowed are 0 and 68-65535", n.MTU)
	}
	return nil
}

// interfaceDeviceUnit is the device unit systemd has for a network
// interface of the host's namespace while it exists
// (sys-subsystem-net-devices-<name>.device, the path escaped as
// systemd-escape --path does).
func interfaceDeviceUnit(name string) string {
	var b strings.Builder
	for i, c := range []byte("sys/subsystem/net/devices/" + name) {
		switch {
		case c == '/':
			b.WriteByte('-')
		case c == '.' && i == 0, !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':' || c == '_' || c == '.'):
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String() + ".device"
}
