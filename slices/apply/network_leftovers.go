package apply

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vishvananda/netns"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
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
func networkLeftovers(root string, rec *record.Record) []transaction.Leftover {
	dir := filepath.Join(root, bundle.NetnsDir)
	h, done, err := host.NetnsHost(root, netns.None())
	if err != nil {
		return []transaction.Leftover{{What: "read " + dir, Remove: func() error { return err }}}
	}
	defer done()
	out := namespaceLeftovers(root, h, rec)
	if rec.Network != nil {
		out = append(out, uplinkLeftovers(root, rec.Network, out)...)
	}
	if rec.Network == nil && !slices.ContainsFunc(rec.Partitions, func(p record.Partition) bool { return p.Network != nil }) {
		return out // host mode: no namespace of this tool's, no sandbox's to clean
	}
	stale, err := h.StaleEntries()
	if err != nil {
		return append(out, transaction.Leftover{What: "list " + dir, Remove: func() error { return err }})
	}
	for _, name := range stale {
		rel := path.Join(strings.TrimPrefix(bundle.NetnsDir, "/"), name)
		out = append(out, transaction.Leftover{What: "remove the stale " + filepath.Join(dir, name) + " (a pod sandbox's namespace, gone)", Remove: func() error { return host.RemoveFile(root, rel) }})
	}
	return out
}

// namespaceLeftovers are the recorded partitions' namespaces still there
// (their ExecStop= did not run); removing one gives its devices back to
// the host and removes its host link.
func namespaceLeftovers(root string, h *pnetns.Host, rec *record.Record) []transaction.Leftover {
	var out []transaction.Leftover
	for _, p := range rec.Partitions {
		n := p.Network
		if n == nil {
			continue
		}
		if st, err := h.Inspect(pnetns.Partition{Namespace: n.Namespace, Interface: n.Interface}); err == nil && st.Namespace {
			part := pnetns.Partition{Namespace: n.Namespace, HostLink: n.HostLink, Interface: n.Interface, Devices: rec.DevicesOf(n.Namespace)}
			out = append(out, transaction.Leftover{What: "remove network namespace " + n.Namespace, Remove: func() error {
				return transaction.InRootNetwork(root, func(host *pnetns.Host) error { return host.DownPartition(part) })
			}})
		}
	}
	return out
}

// uplinkLeftovers are the recorded bridges, host links and NAT table the
// uplink's ExecStop= left, and the forwarding it did not restore;
// namespaces are the namespace leftovers, whose removal takes their host
// links with them.
func uplinkLeftovers(root string, rn *record.Network, namespaces []transaction.Leftover) []transaction.Leftover {
	var out []transaction.Leftover
	var objs []transaction.StaleNetwork
	err := transaction.InRootNetwork(root, func(h *pnetns.Host) error {
		for _, b := range rn.Bridges {
			ok, err := h.HasBridge(b)
			if err != nil {
				return err
			}
			if ok {
				objs = append(objs, transaction.StaleNetwork{Bridge: b})
			}
		}
		for _, ns := range rn.Namespaces {
			if slices.ContainsFunc(namespaces, func(l transaction.Leftover) bool { return l.What == "remove network namespace "+ns.Name }) {
				continue // DownPartition removes its host link
			}
			ok, err := h.HasLink(ns.HostLink)
			if err != nil {
				return err
			}
			if ok {
				objs = append(objs, transaction.StaleNetwork{HostLink: ns.HostLink})
			}
		}
		if !rn.NAT {
			return nil
		}
		ok, err := h.HasNAT()
		if ok {
			objs = append(objs, transaction.StaleNetwork{NAT: true})
		}
		return err
	})
	if err != nil {
		out = append(out, transaction.Leftover{What: "read the host's network", Remove: func() error { return err }})
	}
	for _, o := range objs {
		out = append(out, transaction.Leftover{What: "remove " + o.String(), Remove: func() error { return transaction.RemoveStaleNetwork(root, o) }})
	}
	return append(out, forwardingLeftover(root)...)
}

// forwardingLeftover restores the host's IPv4 forwarding when the value
// found before the uplink's first start is still kept: its ExecStop=,
// which restores and forgets it, did not run (a rollback stopped it
// after its file was gone, #38 item 4), and forwarding stayed on.
func forwardingLeftover(root string) []transaction.Leftover {
	r := fsutil.NewRoot(root)
	before, ok, err := pnetns.SavedForwarding(r)
	switch {
	case err != nil:
		return []transaction.Leftover{{What: "read " + r.Path(pnetns.ForwardingFile), Remove: func() error { return err }}}
	case !ok:
		return nil
	}
	return []transaction.Leftover{{What: "restore net.ipv4.ip_forward to " + before + " (the uplink stopped without restoring it)", Remove: func() error {
		return transaction.InRootNetwork(root, func(h *pnetns.Host) error { return h.RestoreForwarding(r) })
	}}}
}
