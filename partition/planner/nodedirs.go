package planner

import (
	"fmt"
	"strings"

	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// NodeDir is a directory a partition has of its own at a host path that
// node agents, CNI add-ons and log collectors hard-code (flannel's
// /run/flannel, the CNI config in /etc/cni/net.d, pod logs in
// /var/log/pods): Source, on the host, is bound at Path in the
// partition's mount namespace, which its containerd, kubelet, CNI
// plugins and its containers' hostPath mounts share. As on a machine of
// its own, what a DaemonSet writes there is the partition's alone.
type NodeDir struct {
	Path   string `json:"path"`
	Source string `json:"source"`
}

// NodeDirTree is a tree a node dir may lie in, with the systemd
// directive that makes a directory there.
type NodeDirTree struct{ Path, Directive string }

// NodeDirTrees are where a node dir may lie: systemd makes both ends of
// the bind there, with Directive, before it sets up the namespace, which
// needs them to exist. The holder's unit lists the directives in this
// order.
var NodeDirTrees = []NodeDirTree{
	{"/etc", "ConfigurationDirectory"},
	{"/run", "RuntimeDirectory"},
	{"/var/lib", "StateDirectory"},
	{"/var/log", "LogsDirectory"},
	{"/var/cache", "CacheDirectory"},
}

// nodeDirForbidden are trees no node dir may be in or contain: the
// system's and numa-partition's own, and the kubelet directory every
// partition already has of its own (its root dir is bound there).
var nodeDirForbidden = []string{"/etc/systemd", hostpaths.ConfigDir, "/etc/kubernetes", "/run/systemd", "/run/netns",
	hostpaths.RunDir, "/run/containerd", hostpaths.StateDir, "/var/lib/kubelet", "/var/lib/systemd",
	"/var/lib/containerd", "/var/log/journal"}

// NodeDirSource is partition's directory on the host for a node dir:
// the path with "-<partition>" appended, next to the path it stands in
// for (/run/flannel-node0 for /run/flannel).
func NodeDirSource(path, partition string) string { return path + "-" + partition }

// Tree is the tree of NodeDirTrees the node dir lies in.
func (d NodeDir) Tree() string { return treeOf(d.Path) }

// treeOf is the tree of NodeDirTrees path lies in, "" when none.
func treeOf(path string) string {
	for _, t := range NodeDirTrees {
		if strings.HasPrefix(path, t.Path+"/") {
			return t.Path
		}
	}
	return ""
}

// planNodeDirs gives every partition its node dirs (namespace mode,
// each partition with its own containerd), and kubelet the pod logs
// directory log collectors expect when /var/log/pods is one of them.
func (pl *planning) planNodeDirs() {
	c, col, plan := pl.c.Network, pl.col, pl.plan
	paths := c.NodeDirs
	if paths == nil {
		paths = config.DefaultNodeDirs
	}
	if plan.Network.Mode != NetworkNamespace || pl.c.Runtime.Mode == config.RuntimeModeShared {
		if len(c.NodeDirs) > 0 && plan.Network.Mode == NetworkHost {
			col.Add("network.node_dirs", "is set, but network.mode = %q: partitions in the host's namespace share its directories as they share its network; remove it or use mode = %q", NetworkHost, NetworkNamespace)
		}
		return
	}
	// Every rule a node dir must follow is checkNodeDirs's (checkPaths),
	// which plans read from a file go through too.
	for i := range plan.Partitions {
		part := &plan.Partitions[i]
		for _, p := range paths {
			part.NodeDirs = append(part.NodeDirs, NodeDir{Path: p, Source: NodeDirSource(p, part.Name)})
			// The pod logs directory that is this node dir's source is
			// the node dir itself in kubelet's namespace: kubelet writes
			// where log collectors look (and its /var/log/containers
			// links point there).
			if p == DefaultPodLogsPath && part.Kubelet.PodLogsDir == NodeDirSource(p, part.Name) {
				part.Kubelet.PodLogsDir = DefaultPodLogsPath
			}
		}
	}
}

// checkNodeDirs reports what is wrong with a partition's node dirs, by
// the rules planNodeDirs makes them by: each path (nodeDirProblem), no
// two overlapping, and each source the partition's own (NodeDirSource)
// and overlapping no node dir. A plan read from a file goes through it
// too (checkPaths, CheckPaths), so it carries no node dir the
// planner would have refused. The partitions share their paths: the
// collector keeps a repeated message once.
func checkNodeDirs(col *config.Collector, part *Partition) {
	const key = "network.node_dirs"
	ok := true
	for i, d := range part.NodeDirs {
		if msg := nodeDirProblem(d.Path); msg != "" {
			col.Add(key, "%q %s", d.Path, config.Whole(msg))
			ok = false
			continue
		}
		for _, q := range part.NodeDirs[:i] {
			if hostpaths.Under(d.Path, q.Path) || hostpaths.Under(q.Path, d.Path) {
				col.Add(key, "%q and %q overlap: list each directory once, and none inside another", q.Path, d.Path)
				ok = false
			}
		}
	}
	if !ok {
		return
	}
	for _, d := range part.NodeDirs {
		if own := NodeDirSource(d.Path, part.Name); d.Source != own {
			col.Add(key, "%q is not partition %s's directory for %q, which is %q", d.Source, part.Name, d.Path, own)
			continue
		}
		// The source is a host path the partition writes to as much as
		// the node dir is: the same rule holds for it (#38: "/etc/numa"
		// of partition "partition" was /etc/numa-partition).
		if msg := nodeDirProblem(d.Source); msg != "" {
			col.Add(key, "%q is partition %s's directory for %q (the path with \"-%s\" appended), which %s: choose another node dir or partition name", d.Source, part.Name, d.Path, part.Name, config.Whole(msg))
			continue
		}
		// A source inside (or holding) another node dir would be bound
		// over, or bind over, the other.
		for _, q := range part.NodeDirs {
			if hostpaths.Under(d.Source, q.Path) || hostpaths.Under(q.Path, d.Source) {
				col.Add(key, "%q is partition %s's directory for %q, which overlaps the node dir %q: rename one", d.Source, part.Name, d.Path, q.Path)
			}
		}
	}
}

// DefaultPodLogsPath is kubelet's default pod logs directory, which log
// collectors' DaemonSets mount.
const DefaultPodLogsPath = "/var/log/pods"

// nodeDirProblem says what is wrong with a network.node_dirs entry, ""
// when nothing.
func nodeDirProblem(p string) string {
	if msg := validation.PathProblem(p); msg != "" {
		return msg
	}
	if treeOf(p) == "" {
		trees := make([]string, len(NodeDirTrees))
		for i, t := range NodeDirTrees {
			trees[i] = t.Path
		}
		return fmt.Sprintf("is not below %s, where systemd makes a partition's own copy before binding it", strings.Join(trees, ", "))
	}
	for _, t := range nodeDirForbidden {
		if hostpaths.Under(p, t) || hostpaths.Under(t, p) {
			return fmt.Sprintf("is or holds %s, which belongs to the system, to numa-partition or (/var/lib/kubelet) is every partition's own already", t)
		}
	}
	return ""
}

// inNodeDir reports whether path lies in one of the partition's node
// dirs: it is then the partition's own although its path is every
// partition's.
func (p *Partition) inNodeDir(path string) bool {
	for _, d := range p.NodeDirs {
		if hostpaths.Under(path, d.Path) {
			return true
		}
	}
	return false
}
