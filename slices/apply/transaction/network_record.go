package transaction

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vishvananda/netns"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
	pnetns "github.com/numa-partition/numa-partition/slices/netns"
)

// recordNetwork is what the record keeps of a bundle's network.
func recordNetwork(n *bundle.Network) *record.Network {
	if n == nil {
		return nil
	}
	r := &record.Network{NAT: n.NAT, Namespaces: slices.Clone(n.Namespaces)}
	if n.Bridge != "" {
		r.Bridges = []string{n.Bridge}
	}
	return r
}

// mergeNetwork is every object of a and of b: a pending record's.
func mergeNetwork(a, b *record.Network) *record.Network {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	m := &record.Network{NAT: a.NAT || b.NAT, Bridges: AppendNew(slices.Clone(a.Bridges), b.Bridges...)}
	m.Namespaces = slices.Clone(a.Namespaces)
	for _, ns := range b.Namespaces {
		i := slices.IndexFunc(m.Namespaces, func(x bundle.Namespace) bool { return x.Name == ns.Name })
		if i < 0 {
			m.Namespaces = append(m.Namespaces, ns)
			continue
		}
		m.Namespaces[i].Devices = AppendNew(slices.Clone(m.Namespaces[i].Devices), ns.Devices...)
	}
	return m
}

// StaleNetwork is a network object of the previous generation that the
// plan no longer has and the host still has: a bridge to remove, or
// devices a partition's namespace holds that go back to the host.
type StaleNetwork struct {
	Bridge    string   `json:"bridge,omitempty"`
	NAT       bool     `json:"nat,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Devices   []string `json:"devices,omitempty"`
	// HostLink is the host end of a namespace's link left behind.
	HostLink string `json:"hostLink,omitempty"`
}

func (s StaleNetwork) String() string {
	switch {
	case s.Bridge != "":
		return "bridge " + s.Bridge
	case s.NAT:
		return "nftables table ip " + pnetns.NATTable
	case s.HostLink != "":
		return "host link " + s.HostLink
	}
	return fmt.Sprintf("devices %s of namespace %s (back to the host's)", strings.Join(s.Devices, ", "), s.Namespace)
}

// staleNetwork compares the previous record's network objects with the
// desired ones and reads which of those no longer desired the host at
// root still has. Records written before the network was recorded list
// none.
func staleNetwork(root string, prev *record.Record, d Desired) ([]StaleNetwork, error) {
	if prev == nil || prev.Network == nil {
		return nil, nil
	}
	want := recordNetwork(d.Network)
	if want == nil {
		want = &record.Network{}
	}
	var out []StaleNetwork
	for _, old := range prev.Network.Namespaces {
		var keep []string
		if i := slices.IndexFunc(want.Namespaces, func(x bundle.Namespace) bool { return x.Name == old.Name }); i >= 0 {
			keep = want.Namespaces[i].Devices
		}
		gone := slices.DeleteFunc(slices.Clone(old.Devices), func(dev string) bool { return slices.Contains(keep, dev) })
		if len(gone) == 0 {
			continue
		}
		h, done, err := host.NetnsHost(root, netns.None())
		if err != nil {
			return nil, fmt.Errorf("reading the host: %w", err)
		}
		st, err := h.Inspect(pnetns.Partition{Namespace: old.Name, Interface: old.Interface, Devices: gone})
		done()
		if err != nil {
			return nil, fmt.Errorf("reading the host: %w", err)
		}
		if len(st.Devices) > 0 {
			out = append(out, StaleNetwork{Namespace: old.Name, Devices: st.Devices})
		}
	}
	bridges := slices.DeleteFunc(slices.Clone(prev.Network.Bridges), func(b string) bool { return slices.Contains(want.Bridges, b) })
	nat := prev.Network.NAT && !want.NAT
	if len(bridges) == 0 && !nat {
		return out, nil
	}
	err := InRootNetwork(root, func(h *pnetns.Host) error {
		for _, b := range bridges {
			ok, err := h.HasBridge(b)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, StaleNetwork{Bridge: b})
			}
		}
		if !nat {
			return nil
		}
		ok, err := h.HasNAT()
		if ok {
			out = append(out, StaleNetwork{NAT: true})
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the host: %w", err)
	}
	return out, nil
}

// InRootNetwork runs f with root's network namespace as the host's: its
// bridge and NAT live there, never in this process's when root is
// another host's.
func InRootNetwork(root string, f func(*pnetns.Host) error) error {
	hostNS, err := host.RootNetnsHandle(root)
	if err != nil {
		return err
	}
	defer hostNS.Close()
	h, done, err := host.NetnsHost(root, hostNS)
	if err != nil {
		return err
	}
	defer done()
	return f(h)
}

func RemoveStaleNetwork(root string, s StaleNetwork) error {
	return InRootNetwork(root, func(h *pnetns.Host) error {
		switch {
		case s.Bridge != "":
			return h.RemoveBridge(s.Bridge)
		case s.NAT:
			return h.RemoveNAT()
		case s.HostLink != "":
			return h.RemoveHostLink(s.HostLink)
		}
		return h.MoveDevicesOut(pnetns.Partition{Namespace: s.Namespace, Devices: s.Devices})
	})
}
