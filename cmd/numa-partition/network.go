package main

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/slices/netns"
)

// networkCommand is what the rendered network units run: each subcommand
// builds or removes one thing, told everything on its command line.
func networkCommand() *cli.Command {
	// One set of flag values, shared by the subcommands that take them
	// (requireInBefore still checks every required one in each).
	uplink, namespace := uplinkFlags(), namespaceFlags()
	return &cli.Command{
		Name:  "network",
		Usage: "build or remove the partitions' network namespaces and uplink (run by the rendered netns-<partition>.service and numa-partition-network.service)",
		Description: "Every fact comes from the command line, which render writes into the units:\n" +
			"the units say what they build. Both directions converge: `up` finishes what a\n" +
			"killed run left and keeps what is already as asked (a running partition's\n" +
			"namespace is never replaced), `down` removes what is there and is not an error\n" +
			"when nothing is. See docs/network.md.",
		Subcommands: []*cli.Command{
			{
				Name:  "uplink",
				Usage: "the host side: bridge, address, IPv4 forwarding and NAT (bridge), or a check of the parent NIC (macvlan)",
				Subcommands: []*cli.Command{
					{Name: "up", Usage: "create or converge the uplink", Flags: uplink, Action: networkUplinkUp},
					{Name: "down", Usage: "remove the uplink and restore forwarding", Flags: uplink, Action: networkUplinkDown},
				},
			},
			{
				Name:  "up",
				Usage: "create or converge one partition's namespace, link, address and default route, and move its devices in",
				Flags: append(append([]cli.Flag{
					&cli.StringFlag{Name: "address", Required: true, Usage: "the partition's address with its length"},
					&cli.StringFlag{Name: "gateway", Usage: "the default route"},
				}, namespace...), uplink...),
				Action: networkUp,
			},
			{
				Name:   "down",
				Usage:  "move one partition's devices back to the host's namespace and remove its namespace and link",
				Flags:  namespace,
				Action: networkDown,
			},
		},
	}
}

// uplinkFlags say what the uplink is: the uplink's subcommands take them,
// and a partition's up, whose link joins the uplink.
func uplinkFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "uplink", Required: true, Usage: "bridge or macvlan"},
		&cli.StringFlag{Name: "bridge", Usage: "the host bridge (bridge uplink)"},
		&cli.StringFlag{Name: "host-address", Usage: "the bridge's address with its length, the partitions' gateway"},
		&cli.StringFlag{Name: "nat", Usage: "masquerade this network's traffic leaving the host by another interface"},
		&cli.StringFlag{Name: "parent", Usage: "the NIC of the macvlans (macvlan uplink)"},
		&cli.IntFlag{Name: "mtu", Usage: "MTU; 0 follows the uplink"},
	}
}

// namespaceFlags say which partition's namespace, link and devices a
// partition's up and down act on.
func namespaceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "namespace", Required: true, Usage: "the namespace's name under " + netns.DefaultDir},
		&cli.StringFlag{Name: "host-link", Required: true, Usage: "the host end of the partition's link"},
		&cli.StringFlag{Name: "interface", Value: "eth0", Usage: "the link's name inside the namespace"},
		&cli.StringSliceFlag{Name: "device", Usage: "a host interface the namespace holds: moved in by up, back to the host by down (repeat for each)"},
	}
}

// networkUplinkUp is `network uplink up`.
func networkUplinkUp(c *cli.Context) error {
	return withHost(func(h *netns.Host) error {
		u, err := uplinkFrom(c)
		if err != nil {
			return err
		}
		return h.UpUplink(u, fsutil.NewRoot("/"))
	})
}

// networkUplinkDown is `network uplink down`.
func networkUplinkDown(c *cli.Context) error {
	return withHost(func(h *netns.Host) error {
		u, err := uplinkFrom(c)
		if err != nil {
			return err
		}
		return h.DownUplink(u, fsutil.NewRoot("/"))
	})
}

// networkUp is `network up`: one partition's namespace, on the uplink.
func networkUp(c *cli.Context) error {
	return withHost(func(h *netns.Host) error {
		u, err := uplinkFrom(c)
		if err != nil {
			return err
		}
		p, err := partitionFrom(c)
		if err != nil {
			return err
		}
		err = h.UpPartition(u, p)
		// The partition runs without a device a pod's namespace holds:
		// said in the journal, not fatal (its daemons Require= this unit).
		var missing *netns.MissingDevicesError
		if errors.As(err, &missing) {
			warnAll(c.App.ErrWriter, err.Error())
			return nil
		}
		return err
	})
}

// networkDown is `network down`.
func networkDown(c *cli.Context) error {
	return withHost(func(h *netns.Host) error {
		p, err := partitionFrom(c)
		if err != nil {
			return err
		}
		return h.DownPartition(p)
	})
}

func withHost(f func(*netns.Host) error) error {
	h, err := netns.Live()
	if err != nil {
		return err
	}
	defer h.Close()
	return f(h)
}

func uplinkFrom(c *cli.Context) (netns.Uplink, error) {
	u := netns.Uplink{Kind: c.String("uplink"), Bridge: c.String("bridge"), Parent: c.String("parent"), MTU: c.Int("mtu")}
	var err error
	switch u.Kind {
	case netns.KindBridge:
		if u.Bridge == "" {
			return u, fmt.Errorf("--bridge is required with --uplink %s", u.Kind)
		}
		if c.IsSet("host-address") {
			if u.HostAddress, err = parsePrefix("--host-address", c.String("host-address")); err != nil {
				return u, err
			}
		}
		if c.IsSet("nat") {
			if u.NAT, err = parsePrefix("--nat", c.String("nat")); err != nil {
				return u, err
			}
		}
	case netns.KindMacvlan:
		if u.Parent == "" {
			return u, fmt.Errorf("--parent is required with --uplink %s", u.Kind)
		}
	default:
		return u, fmt.Errorf("--uplink %q: allowed are %q and %q", u.Kind, netns.KindBridge, netns.KindMacvlan)
	}
	return u, nil
}

func partitionFrom(c *cli.Context) (netns.Partition, error) {
	p := netns.Partition{Namespace: c.String("namespace"), HostLink: c.String("host-link"), Interface: c.String("interface"), Devices: c.StringSlice("device")}
	var err error
	if c.IsSet("address") {
		if p.Address, err = parsePrefix("--address", c.String("address")); err != nil {
			return p, err
		}
	}
	if g := c.String("gateway"); g != "" {
		if p.Gateway, err = netip.ParseAddr(g); err != nil {
			return p, fmt.Errorf("--gateway %q: not an IP address", g)
		}
	}
	return p, nil
}

func parsePrefix(flag, v string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(v)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("%s %q: want an IPv4 address with its length (10.212.0.2/24)", flag, v)
	}
	return p, nil
}
