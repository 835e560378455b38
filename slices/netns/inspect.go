package netns

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// State is what a partition's namespace holds now, for status.
type State struct {
	// Namespace is false when the named namespace is not mounted.
	Namespace bool `json:"namespace"`
	// Link is false when the namespace has no such interface.
	Link bool `json:"link"`
	Up   bool `json:"up"`
	// Addresses are the interface's IPv4 addresses.
	Addresses []netip.Prefix `json:"addresses"`
	// Devices are those of Partition.Devices the namespace holds.
	Devices []string `json:"devices"`
}

// Inspect reads p's namespace without changing it.
func (h *Host) Inspect(p Partition) (State, error) {
	st := State{Addresses: []netip.Prefix{}, Devices: []string{}}
	ok, err := isNamespace(h.path(p.Namespace))
	if err != nil || !ok {
		return st, err
	}
	st.Namespace = true
	ns, err := h.openNamespace(p.Namespace)
	if err != nil {
		return st, err
	}
	defer ns.Close()
	inner, err := routeHandle(ns)
	if err != nil {
		return st, fmt.Errorf("netlink in namespace %s: %w", p.Namespace, err)
	}
	defer inner.Close()
	for _, d := range p.Devices {
		if _, err := inner.LinkByName(d); err == nil {
			st.Devices = append(st.Devices, d)
		} else if !isNotFound(err) {
			return st, fmt.Errorf("namespace %s: %s: %w", p.Namespace, d, err)
		}
	}
	link, err := inner.LinkByName(p.Interface)
	if isNotFound(err) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("namespace %s: %s: %w", p.Namespace, p.Interface, err)
	}
	st.Link = true
	st.Up = link.Attrs().Flags&(1<<0) != 0 // net.FlagUp
	addrs, err := inner.AddrList(link, unix.AF_INET)
	if err != nil {
		return st, fmt.Errorf("namespace %s: addresses of %s: %w", p.Namespace, p.Interface, err)
	}
	for _, a := range addrs {
		st.Addresses = append(st.Addresses, prefixOf(a.IPNet))
	}
	return st, nil
}
