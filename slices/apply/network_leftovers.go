package apply

import (
	"path/filepath"

	"github.com/vishvananda/netns"

	pnetns "github.com/numa-partition/numa-partition/slices/netns"
	bundle "github.com/numa-partition/numa-partition/slices/render"
)

// networkLeftovers are what the partitions' namespaces leave once their
// units are stopped: a namespace whose ExecStop= did not run (a unit that
// had failed), and the stale mount points in /run/netns of the pod
// sandboxes of the partitions' containerds (containerd mounts them in its
// own mount namespace, gone with it; the empty files stay and `ip netns`
// lists them).
func networkLeftovers(root string, rec *Record) []leftover {
	var out []leftover
	dir := filepath.Join(root, bundle.NetnsDir)
	h := &pnetns.Host{Dir: dir, NS: netns.None()}
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
				hostNS, err := netns.GetFromPath(rootNetns(root))
				if err != nil {
					return err
				}
				defer hostNS.Close()
				host := &pnetns.Host{Dir: dir, NS: hostNS}
				return host.DownPartition(pnetns.Partition{Namespace: n.Namespace, HostLink: n.HostLink, Interface: n.Interface})
			}})
		}
	}
	if !namespaced {
		return out
	}
	stale, err := pnetns.StaleEntries(dir)
	if err != nil {
		return append(out, leftover{"list " + dir, func() error { return err }})
	}
	for _, p := range stale {
		out = append(out, leftover{"remove the stale " + p + " (a pod sandbox's namespace, gone)", func() error { return removeFile(p) }})
	}
	return out
}
