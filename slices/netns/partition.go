package netns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// UpPartition gives p its namespace, link, address and default route on
// uplink u (whose bridge UpUplink made). It converges: what exists and is
// as asked is kept, so a running partition's namespace is never replaced.
func (h *Host) UpPartition(u Uplink, p Partition) error {
	if err := h.ensureNamespace(p.Namespace); err != nil {
		return err
	}
	ns, err := h.openNamespace(p.Namespace)
	if err != nil {
		return err
	}
	defer ns.Close()
	host, err := routeHandle(h.NS)
	if err != nil {
		return fmt.Errorf("netlink in the host namespace: %w", err)
	}
	defer host.Close()
	inner, err := routeHandle(ns)
	if err != nil {
		return fmt.Errorf("netlink in namespace %s: %w", p.Namespace, err)
	}
	defer inner.Close()

	mtu, err := uplinkMTU(host, u)
	if err != nil {
		return err
	}
	if _, err := inner.LinkByName(p.Interface); err != nil {
		if !isNotFound(err) {
			return fmt.Errorf("namespace %s: finding %s: %w", p.Namespace, p.Interface, err)
		}
		if err := createLink(host, ns, u, p, mtu); err != nil {
			return err
		}
	}
	if u.Kind == KindBridge {
		if err := attachHostEnd(host, u, p, mtu); err != nil {
			return err
		}
	}
	if err := configureInside(inner, p, mtu); err != nil {
		return err
	}
	missing, err := moveDevicesIn(host, inner, ns, p)
	if err != nil {
		return err
	}
	// A Node forwards (kubeadm's preflight requires it, pod networks
	// route through it): so does each partition's namespace.
	err = inNamespace(ns, func() error {
		if err := os.WriteFile(ipForward, []byte("1\n"), 0o644); err != nil {
			return fmt.Errorf("namespace %s: enabling IPv4 forwarding: %w", p.Namespace, err)
		}
		return nil
	})
	if err == nil && len(missing) > 0 {
		return &MissingDevicesError{Namespace: p.Namespace, Devices: missing}
	}
	return err
}

// MissingDevicesError says which of a partition's devices UpPartition
// found neither in the host's namespace nor in the partition's: a pod's
// namespace holds it (host-device or the SR-IOV CNI moved it there), or
// it is renamed or gone. Everything else is up: the partition runs
// without them, and status reports them.
type MissingDevicesError struct {
	Namespace string
	Devices   []string
}

func (e *MissingDevicesError) Error() string {
	return fmt.Sprintf("devices %s are neither in the host's namespace nor in %s (in a pod's namespace, renamed, or gone): the partition runs without them", strings.Join(e.Devices, ", "), e.Namespace)
}

// createLink makes the partition's link on the host under a temporary
// name in the namespace: a veth whose peer is created right in the
// namespace, or a macvlan moved there. A left-over host end (a veth whose
// namespace was deleted while a process kept it alive, a macvlan that was
// never moved) is removed first.
func createLink(host *netlink.Handle, ns netns.NsHandle, u Uplink, p Partition, mtu int) error {
	if old, err := host.LinkByName(p.HostLink); err == nil {
		if err := host.LinkDel(old); err != nil {
			return fmt.Errorf("removing the stale %s: %w", p.HostLink, err)
		}
	} else if !isNotFound(err) {
		return fmt.Errorf("finding %s: %w", p.HostLink, err)
	}
	attrs := netlink.NewLinkAttrs()
	attrs.Name = p.HostLink
	attrs.MTU = mtu
	switch u.Kind {
	case KindBridge:
		veth := &netlink.Veth{LinkAttrs: attrs, PeerName: p.Interface, PeerNamespace: netlink.NsFd(ns)}
		if err := host.LinkAdd(veth); err != nil {
			return fmt.Errorf("creating veth %s (%s in namespace %s): %w", p.HostLink, p.Interface, p.Namespace, err)
		}
		return nil
	case KindMacvlan:
		parent, err := host.LinkByName(u.Parent)
		if err != nil {
			return fmt.Errorf("uplink NIC %s: %w", u.Parent, err)
		}
		attrs.ParentIndex = parent.Attrs().Index
		mv := &netlink.Macvlan{LinkAttrs: attrs, Mode: netlink.MACVLAN_MODE_BRIDGE}
		if err := host.LinkAdd(mv); err != nil {
			return fmt.Errorf("creating macvlan %s on %s: %w", p.HostLink, u.Parent, err)
		}
		link, err := host.LinkByName(p.HostLink)
		if err == nil {
			err = host.LinkSetNsFd(link, int(ns))
		}
		if err != nil {
			host.LinkDel(mv)
			return fmt.Errorf("moving macvlan %s into namespace %s: %w", p.HostLink, p.Namespace, err)
		}
		inner, err := routeHandle(ns)
		if err != nil {
			return err
		}
		defer inner.Close()
		moved, err := inner.LinkByName(p.HostLink)
		if err == nil {
			err = inner.LinkSetName(moved, p.Interface)
		}
		if err != nil {
			return fmt.Errorf("renaming %s to %s in namespace %s: %w", p.HostLink, p.Interface, p.Namespace, err)
		}
		return nil
	}
	return fmt.Errorf("uplink kind %q: allowed are %q and %q", u.Kind, KindBridge, KindMacvlan)
}

// attachHostEnd puts the veth's host end on the bridge, up.
func attachHostEnd(host *netlink.Handle, u Uplink, p Partition, mtu int) error {
	end, err := host.LinkByName(p.HostLink)
	if err != nil {
		return fmt.Errorf("host end %s of namespace %s: %w", p.HostLink, p.Namespace, err)
	}
	br, err := host.LinkByName(u.Bridge)
	if err != nil {
		return fmt.Errorf("bridge %s: %w (the uplink oneshot creates it)", u.Bridge, err)
	}
	if end.Attrs().MasterIndex != br.Attrs().Index {
		if err := host.LinkSetMaster(end, br); err != nil {
			return fmt.Errorf("attaching %s to bridge %s: %w", p.HostLink, u.Bridge, err)
		}
	}
	if end.Attrs().MTU != mtu {
		if err := host.LinkSetMTU(end, mtu); err != nil {
			return fmt.Errorf("MTU %d on %s: %w", mtu, p.HostLink, err)
		}
	}
	if err := host.LinkSetUp(end); err != nil {
		return fmt.Errorf("setting %s up: %w", p.HostLink, err)
	}
	return nil
}

// configureInside brings lo and the link up with exactly the planned
// address and default route.
func configureInside(inner *netlink.Handle, p Partition, mtu int) error {
	lo, err := inner.LinkByName("lo")
	if err == nil {
		err = inner.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("namespace %s: lo up: %w", p.Namespace, err)
	}
	link, err := inner.LinkByName(p.Interface)
	if err != nil {
		return fmt.Errorf("namespace %s: %s: %w", p.Namespace, p.Interface, err)
	}
	if link.Attrs().MTU != mtu {
		if err := inner.LinkSetMTU(link, mtu); err != nil {
			return fmt.Errorf("namespace %s: MTU %d on %s: %w", p.Namespace, mtu, p.Interface, err)
		}
	}
	if err := setOnlyAddress(inner, link, p.Address); err != nil {
		return fmt.Errorf("namespace %s: %w", p.Namespace, err)
	}
	if err := inner.LinkSetUp(link); err != nil {
		return fmt.Errorf("namespace %s: %s up: %w", p.Namespace, p.Interface, err)
	}
	if !p.Gateway.IsValid() {
		return nil
	}
	route := &netlink.Route{LinkIndex: link.Attrs().Index, Gw: net.IP(p.Gateway.AsSlice()), Dst: nil}
	if err := inner.RouteReplace(route); err != nil {
		return fmt.Errorf("namespace %s: default route via %s: %w", p.Namespace, p.Gateway, err)
	}
	return nil
}

// setOnlyAddress leaves want as the link's one IPv4 address (IPv6
// link-local addresses are the kernel's and stay).
func setOnlyAddress(h *netlink.Handle, link netlink.Link, want netip.Prefix) error {
	addrs, err := h.AddrList(link, unix.AF_INET)
	if err != nil {
		return fmt.Errorf("listing the addresses of %s: %w", link.Attrs().Name, err)
	}
	have := false
	for _, a := range addrs {
		if prefixOf(a.IPNet) == want {
			have = true
			continue
		}
		if err := h.AddrDel(link, &a); err != nil {
			return fmt.Errorf("removing address %s of %s: %w", a.IPNet, link.Attrs().Name, err)
		}
	}
	if have {
		return nil
	}
	if err := h.AddrAdd(link, &netlink.Addr{IPNet: ipNet(want)}); err != nil {
		return fmt.Errorf("adding address %s to %s: %w", want, link.Attrs().Name, err)
	}
	return nil
}

// moveDevicesIn moves p's devices from the host's namespace into the
// partition's; one that is there already stays (a re-run). The kernel
// moves a device as it is, down, without its addresses. It returns the
// devices it found in neither namespace.
func moveDevicesIn(host, inner *netlink.Handle, ns netns.NsHandle, p Partition) (missing []string, err error) {
	for _, name := range p.Devices {
		if _, err := inner.LinkByName(name); err == nil {
			continue
		} else if !isNotFound(err) {
			return nil, fmt.Errorf("namespace %s: finding %s: %w", p.Namespace, name, err)
		}
		link, err := host.LinkByName(name)
		if isNotFound(err) {
			missing = append(missing, name)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("finding device %s: %w", name, err)
		}
		if err := host.LinkSetNsFd(link, int(ns)); err != nil {
			return nil, fmt.Errorf("moving device %s into namespace %s: %w", name, p.Namespace, err)
		}
	}
	return missing, nil
}

// moveDevicesOut moves p's devices that its namespace holds back to the
// host's namespace. Without it a physical device would return only once
// the kernel frees the namespace (after its last process, perhaps under
// another name if its own was taken), and a virtual one would be
// destroyed with it. A device that is not in the namespace (a pod's
// namespace holds it, or it is back already) is left where it is.
func (h *Host) moveDevicesOut(host *netlink.Handle, p Partition) error {
	if len(p.Devices) == 0 {
		return nil
	}
	if ok, err := isNamespace(h.path(p.Namespace)); err != nil || !ok {
		return err
	}
	ns, err := h.openNamespace(p.Namespace)
	if err != nil {
		return err
	}
	defer ns.Close()
	inner, err := routeHandle(ns)
	if err != nil {
		return fmt.Errorf("netlink in namespace %s: %w", p.Namespace, err)
	}
	defer inner.Close()
	var errs []error
	for _, name := range p.Devices {
		link, err := inner.LinkByName(name)
		if isNotFound(err) {
			continue
		}
		if err == nil {
			if _, taken := host.LinkByName(name); taken == nil {
				err = fmt.Errorf("the host has another interface named %s", name)
			} else {
				err = inner.LinkSetNsFd(link, int(h.NS))
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("moving device %s from namespace %s back to the host's: %w", name, p.Namespace, err))
		}
	}
	return errors.Join(errs...)
}

// MoveDevicesOut moves those of p's devices that its namespace holds
// back to the host's namespace and leaves the namespace (a plan that no
// longer gives the partition these devices).
func (h *Host) MoveDevicesOut(p Partition) error {
	host, err := routeHandle(h.NS)
	if err != nil {
		return fmt.Errorf("netlink in the host namespace: %w", err)
	}
	defer host.Close()
	return h.moveDevicesOut(host, p)
}

// DownPartition moves p's devices back to the host's namespace and
// removes p's namespace and link. Links in the namespace go with it; the
// host end is removed by name as well, because a namespace that a
// process still holds (a hostNetwork pod's shim) outlives its mount.
func (h *Host) DownPartition(p Partition) error {
	host, err := routeHandle(h.NS)
	if err != nil {
		return fmt.Errorf("netlink in the host namespace: %w", err)
	}
	defer host.Close()
	var errs []error
	if err := h.moveDevicesOut(host, p); err != nil {
		errs = append(errs, err)
	}
	if l, err := host.LinkByName(p.HostLink); err == nil {
		if err := host.LinkDel(l); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", p.HostLink, err))
		}
	} else if !isNotFound(err) {
		errs = append(errs, fmt.Errorf("finding %s: %w", p.HostLink, err))
	}
	if err := h.deleteNamespace(p.Namespace); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func isNotFound(err error) bool {
	var nf netlink.LinkNotFoundError
	return errors.As(err, &nf)
}

func prefixOf(n *net.IPNet) netip.Prefix {
	if n == nil {
		return netip.Prefix{}
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones)
}

func ipNet(p netip.Prefix) *net.IPNet {
	a := p.Addr()
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}
}
