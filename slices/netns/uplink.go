package netns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/hostpaths"
)

// UpUplink makes the host side of uplink u: for a bridge, the bridge with
// its address, IPv4 forwarding and, when asked, the NAT; a macvlan needs
// only its parent NIC, which must exist. What DownUplink must restore
// (the forwarding setting found before) is kept below the host's root.
func (h *Host) UpUplink(u Uplink, root fsutil.Root) error {
	host, err := routeHandle(h.NS)
	if err != nil {
		return fmt.Errorf("netlink in the host namespace: %w", err)
	}
	defer host.Close()
	switch u.Kind {
	case KindMacvlan:
		if _, err := host.LinkByName(u.Parent); err != nil {
			return fmt.Errorf("uplink NIC %s: %w", u.Parent, err)
		}
		return nil
	case KindBridge:
	default:
		return fmt.Errorf("uplink kind %q: allowed are %q and %q", u.Kind, KindBridge, KindMacvlan)
	}
	mtu, err := uplinkMTU(host, u)
	if err != nil {
		return err
	}
	br, err := host.LinkByName(u.Bridge)
	switch {
	case isNotFound(err):
		attrs := netlink.NewLinkAttrs()
		attrs.Name = u.Bridge
		attrs.MTU = mtu
		if err := host.LinkAdd(&netlink.Bridge{LinkAttrs: attrs}); err != nil {
			return fmt.Errorf("creating bridge %s: %w", u.Bridge, err)
		}
		if br, err = host.LinkByName(u.Bridge); err != nil {
			return fmt.Errorf("bridge %s: %w", u.Bridge, err)
		}
	case err != nil:
		return fmt.Errorf("finding bridge %s: %w", u.Bridge, err)
	case br.Type() != "bridge":
		return fmt.Errorf("%s is a %s, not a bridge: choose another network.bridge", u.Bridge, br.Type())
	}
	if br.Attrs().MTU != mtu {
		if err := host.LinkSetMTU(br, mtu); err != nil {
			return fmt.Errorf("MTU %d on bridge %s: %w", mtu, u.Bridge, err)
		}
	}
	if err := setOnlyAddress(host, br, u.HostAddress); err != nil {
		return err
	}
	if err := host.LinkSetUp(br); err != nil {
		return fmt.Errorf("setting bridge %s up: %w", u.Bridge, err)
	}
	if err := h.enableForwarding(root); err != nil {
		return err
	}
	if u.NAT.IsValid() {
		return h.setNAT(u)
	}
	return h.removeNAT()
}

// DownUplink removes what UpUplink made: the bridge, the NAT table, and
// the forwarding setting goes back to what it was.
func (h *Host) DownUplink(u Uplink, root fsutil.Root) error {
	if u.Kind != KindBridge {
		return nil
	}
	host, err := routeHandle(h.NS)
	if err != nil {
		return fmt.Errorf("netlink in the host namespace: %w", err)
	}
	defer host.Close()
	var errs []error
	if err := removeBridge(host, u.Bridge); err != nil {
		errs = append(errs, err)
	}
	if err := h.removeNAT(); err != nil {
		errs = append(errs, err)
	}
	if err := h.RestoreForwarding(root); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// removeBridge removes the bridge name, if there; a link of another kind
// by that name is not numa-partition's and stays.
func removeBridge(host *netlink.Handle, name string) error {
	br, err := host.LinkByName(name)
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("finding bridge %s: %w", name, err)
	case br.Type() != "bridge":
		return fmt.Errorf("%s is a %s, not the bridge numa-partition made: left alone", name, br.Type())
	}
	if err := host.LinkDel(br); err != nil {
		return fmt.Errorf("removing bridge %s: %w", name, err)
	}
	return nil
}

// HasBridge reports whether the host has a bridge by that name.
func (h *Host) HasBridge(name string) (bool, error) {
	host, err := routeHandle(h.NS)
	if err != nil {
		return false, fmt.Errorf("netlink in the host namespace: %w", err)
	}
	defer host.Close()
	l, err := host.LinkByName(name)
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("finding bridge %s: %w", name, err)
	}
	return l.Type() == "bridge", nil
}

// RemoveBridge removes a bridge an earlier uplink made (one a plan no
// longer has: network.bridge renamed, or the uplink is now macvlan).
func (h *Host) RemoveBridge(name string) error {
	host, err := routeHandle(h.NS)
	if err != nil {
		return fmt.Errorf("netlink in the host namespace: %w", err)
	}
	defer host.Close()
	return removeBridge(host, name)
}

// HasLink reports whether the host has a link by that name.
func (h *Host) HasLink(name string) (bool, error) {
	host, err := routeHandle(h.NS)
	if err != nil {
		return false, fmt.Errorf("netlink in the host namespace: %w", err)
	}
	defer host.Close()
	_, err = host.LinkByName(name)
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// RemoveHostLink removes the host end of a partition's link that
// outlived its namespace (a process still held the namespace when it was
// unmounted); links of other kinds than numa-partition makes stay.
func (h *Host) RemoveHostLink(name string) error {
	host, err := routeHandle(h.NS)
	if err != nil {
		return fmt.Errorf("netlink in the host namespace: %w", err)
	}
	defer host.Close()
	l, err := host.LinkByName(name)
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("finding %s: %w", name, err)
	case l.Type() != "veth" && l.Type() != "macvlan":
		return fmt.Errorf("%s is a %s, not a link numa-partition made: left alone", name, l.Type())
	}
	if err := host.LinkDel(l); err != nil {
		return fmt.Errorf("removing %s: %w", name, err)
	}
	return nil
}

// RemoveNAT removes the NAT table, when it is there.
func (h *Host) RemoveNAT() error { return h.removeNAT() }

// uplinkMTU is u.MTU, or the uplink's: the parent NIC's, or for a bridge
// that of the interface holding the host's IPv4 default route (1500
// without one).
func uplinkMTU(host *netlink.Handle, u Uplink) (int, error) {
	if u.MTU > 0 {
		return u.MTU, nil
	}
	if u.Kind == KindMacvlan {
		parent, err := host.LinkByName(u.Parent)
		if err != nil {
			return 0, fmt.Errorf("uplink NIC %s: %w", u.Parent, err)
		}
		return parent.Attrs().MTU, nil
	}
	routes, err := host.RouteList(nil, unix.AF_INET)
	if err != nil {
		return 0, fmt.Errorf("listing the host's routes: %w", err)
	}
	for _, r := range routes {
		if r.Dst != nil && !isDefault(r) {
			continue
		}
		link, err := host.LinkByIndex(r.LinkIndex)
		if err != nil {
			continue
		}
		if link.Attrs().Name == u.Bridge {
			continue
		}
		return link.Attrs().MTU, nil
	}
	return 1500, nil
}

func isDefault(r netlink.Route) bool {
	if r.Dst == nil {
		return true
	}
	ones, _ := r.Dst.Mask.Size()
	return ones == 0
}

// ForwardingFile keeps, below the host's root, ip_forward's value from
// before the first UpUplink. DownUplink puts it back and removes the
// file, so a file found while no uplink runs is a leftover: the uplink
// stopped without its ExecStop= (a rollback that met its unit already
// unloaded), and forwarding is still on (#38 item 4).
var ForwardingFile = path.Join(strings.TrimPrefix(hostpaths.NetworkStateDir, "/"), "ipv4-forwarding-before")

// ipForward is the host namespace's forwarding switch: /proc/sys/net
// shows the network namespace of the thread that opens it.
const ipForward = "/proc/sys/net/ipv4/ip_forward"

// enableForwarding sets net.ipv4.ip_forward in the host's namespace,
// noting the value found the first time.
func (h *Host) enableForwarding(root fsutil.Root) error {
	return h.inHost(func() error {
		before, err := fsutil.ReadFileBounded(ipForward, 16)
		if err != nil {
			return fmt.Errorf("reading %s: %w", ipForward, err)
		}
		if _, err := root.Lstat(ForwardingFile); errors.Is(err, fs.ErrNotExist) {
			// The root's no-follow atomic write, which makes the
			// directories and follows no link on the way (#38).
			if err := root.WriteFile(ForwardingFile, before, 0o644); err != nil {
				return fmt.Errorf("saving the forwarding setting: %w", err)
			}
		} else if err != nil {
			return fmt.Errorf("the saved forwarding setting: %w", err)
		}
		if strings.TrimSpace(string(before)) == "1" {
			return nil
		}
		if err := os.WriteFile(ipForward, []byte("1\n"), 0o644); err != nil {
			return fmt.Errorf("enabling IPv4 forwarding (%s): %w", ipForward, err)
		}
		return nil
	})
}

// SavedForwarding is the forwarding value the first UpUplink found, as
// kept below root; ok is false when none is kept.
func SavedForwarding(root fsutil.Root) (value string, ok bool, err error) {
	b, err := root.ReadFile(ForwardingFile, 16)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading the saved forwarding setting: %w", err)
	}
	v := strings.TrimSpace(string(b))
	if v != "0" && v != "1" {
		return "", false, fmt.Errorf("the saved forwarding setting %s holds %q: allowed are 0 and 1", root.Path(ForwardingFile), v)
	}
	return v, true, nil
}

// RestoreForwarding puts back the value enableForwarding found (in the
// host namespace h stands for) and forgets it; nothing when none is kept.
func (h *Host) RestoreForwarding(root fsutil.Root) error {
	before, ok, err := SavedForwarding(root)
	if err != nil || !ok {
		return err
	}
	err = h.inHost(func() error {
		if err := os.WriteFile(ipForward, []byte(before+"\n"), 0o644); err != nil {
			return fmt.Errorf("restoring IPv4 forwarding (%s): %w", ipForward, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return root.Remove(ForwardingFile)
}

// inHost runs f on a thread in the host's namespace: /proc/sys/net shows
// the namespace of the thread that opens it. The thread returns to the
// runtime only if it could go back to where it was.
func (h *Host) inHost(f func() error) error { return inNamespace(h.NS, f) }

// inNamespace runs f on a thread of its own in namespace ns.
func inNamespace(ns netns.NsHandle, f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := netns.Get()
		if err != nil {
			done <- fmt.Errorf("this thread's network namespace: %w", err)
			return
		}
		defer self.Close()
		if err := netns.Set(ns); err != nil {
			done <- fmt.Errorf("entering a network namespace: %w", err)
			return
		}
		err = f()
		if netns.Set(self) == nil {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}
