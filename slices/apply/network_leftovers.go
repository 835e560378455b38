package apply

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vishvananda/netns"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/slices/bundle"
	pnetns "github.com/numa-partition/numa-partition/slices/netns"
)

// networkLeftovers are what the partitions' namespaces and the uplink
// leave once their units are stopped: a namespace whose ExecStop= did not
// run (a unit that had failed; its devices go back to the host), a
// recorded bridge or NAT table the uplink's ExecStop= did not remove (it
// failed, or knew another bridge), IPv4 forwarding it did not restore,
// and the stale mount points in /run/netns of the pod
// sandboxes of the partitions' containerds (containerd mounts them in its
// own mount namespace, gone with it; the empty files stay and `ip netns`
// lists them).
func networkLeftovers(root string, rec *Record) []leftover {
	var out []leftover
	dir := filepath.Join(root, bundle.NetnsDir)
	h, done, err := netnsHost(root, netns.None())
	if err != nil {
		return []leftover{{"read " + dir, func() error { return err }}}
	}
	defer done()
	namespaced := false
	for _, p := range rec.Partitions {
		n := p.Network
		if n == nil {
			continue
		}
		namespaced = true
		if st, err := h.Inspect(pnetns.Partition{Namespace: n.Namespace, Interface: n.Interface}); err == nil && st.Namespace {
			out = append(out, leftover{"remove network namespace " + n.Namespace, func() error {
				// The host end lives in root's network namespace, never
				// in this process's when root is another host's.
				hostNS, err := rootNetnsHandle(root)
				if err != nil {
					return err
				}
				defer hostNS.Close()
				host, done, err := netnsHost(root, hostNS)
				if err != nil {
					return err
				}
				defer done()
				return host.DownPartition(pnetns.Partition{Namespace: n.Namespace, HostLink: n.HostLink, Interface: n.Interface, Devices: rec.devicesOf(n.Namespace)})
			}})
		}
	}
	if rn := rec.Network; rn != nil {
		namespaced = true
		var objs []StaleNetwork
		err := inRootNetwork(root, func(h *pnetns.Host) error {
			for _, b := range rn.Bridges {
				ok, err := h.HasBridge(b)
				if err != nil {
					return err
				}
				if ok {
					objs = append(objs, StaleNetwork{Bridge: b})
				}
			}
			for _, ns := range rn.Namespaces {
				if slices.ContainsFunc(out, func(l leftover) bool { return l.what == "remove network namespace "+ns.Name }) {
					continue // DownPartition removes its host link
				}
				ok, err := h.HasLink(ns.HostLink)
				if err != nil {
					return err
				}
				if ok {
					objs = append(objs, StaleNetwork{HostLink: ns.HostLink})
				}
			}
			if !rn.NAT {
				return nil
			}
			ok, err := h.HasNAT()
			if ok {
				objs = append(objs, StaleNetwork{NAT: true})
			}
			return err
		})
		if err != nil {
			out = append(out, leftover{"read the host's network", func() error { return err }})
		}
		for _, o := range objs {
			out = append(out, leftover{"remove " + o.String(), func() error { return removeStaleNetwork(root, o) }})
		}
		out = append(out, forwardingLeftover(root)...)
	}
	if !namespaced {
		return out
	}
	stale, err := h.StaleEntries()
	if err != nil {
		return append(out, leftover{"list " + dir, func() error { return err }})
	}
	for _, name := range stale {
		rel := path.Join(strings.TrimPrefix(bundle.NetnsDir, "/"), name)
		out = append(out, leftover{"remove the stale " + filepath.Join(dir, name) + " (a pod sandbox's namespace, gone)", func() error { return removeFile(root, rel) }})
	}
	return out
}

// forwardingLeftover restores the host's IPv4 forwarding when the value
// found before the uplink's first start is still kept: its ExecStop=,
// which restores and forgets it, did not run (a rollback stopped it
// after its file was gone, #38 item 4), and forwarding stayed on.
func forwardingLeftover(root string) []leftover {
	r := fsutil.NewRoot(root)
	before, ok, err := pnetns.SavedForwarding(r)
	switch {
	case err != nil:
		return []leftover{{"read " + r.Path(pnetns.ForwardingFile), func() error { return err }}}
	case !ok:
		return nil
	}
	return []leftover{{"restore net.ipv4.ip_forward to " + before + " (the uplink stopped without restoring it)", func() error {
		return inRootNetwork(root, func(h *pnetns.Host) error { return h.RestoreForwarding(r) })
	}}}
}
