package render

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// UplinkUnit makes the host side of the partitions' network (namespace
// mode): the bridge, forwarding and NAT, or for macvlan a check that the
// parent NIC is there.
const UplinkUnit = "numa-partition-network.service"

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
	return &netnsView{Unit: netnsUnit(p.Name), Path: path.Join(bundle.NetnsDir, p.Network.Namespace)}
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

// uplink renders the host's uplink oneshot. The uplink, bridge, parent,
// host address and MTU are the planner's rules, held where the plan
// entered.
func (r *renderer) uplink() error {
	n := r.plan.Network
	if n.Mode != planner.NetworkNamespace {
		return nil
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
	r.units = append(r.units, bundle.Unit{Name: UplinkUnit, Phase: bundle.PhaseNetwork, Enable: true, Start: true, Files: []string{p}, RecreatesPods: true})
	r.network = &bundle.Network{Bridge: n.Bridge, NAT: n.NAT, Namespaces: []bundle.Namespace{}}
	return nil
}

// netns renders partition p's namespace oneshot. Every partition has a
// network in namespace mode and none in host mode, and every name and
// address is one the oneshot's command line carries: the planner's rules
// (planNetworkProblem for a plan file), held where the plan entered.
func (r *renderer) netns(p *planner.Partition) error {
	pn := p.Network
	if pn == nil {
		return nil
	}
	args := []string{"--namespace", pn.Namespace, "--host-link", pn.HostLink, "--interface", pn.Interface}
	var devices, deviceUnits, names []string
	for _, d := range pn.Devices {
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
	r.units = append(r.units, bundle.Unit{Name: unit, Phase: bundle.PhaseNetwork, Partition: p.Name, Enable: true, Start: true, Files: []string{path}, RecreatesPods: true})
	r.network.Namespaces = append(r.network.Namespaces, bundle.Namespace{Partition: p.Name, Name: pn.Namespace, HostLink: pn.HostLink, Interface: pn.Interface, Devices: names})
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
