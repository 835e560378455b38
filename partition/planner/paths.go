package planner

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// The rules for every path and argument the plan puts into unit files,
// command lines and YAML. They live here, with the keys and lines of the
// config, so that plan and `config check` refuse what render and apply
// would; a plan read from a file is held to the same functions
// (CheckPlanFile).

// pathKind says what the tool does at a path, which decides where it may
// lie.
type pathKind int

const (
	readPath         pathKind = iota // a binary or file something reads
	writtenFile                      // a file render writes or kubelet writes
	ownDir                           // a directory a partition's daemons own
	stateDir                         // an ownDir systemd makes (StateDirectory=): below /var/lib
	devicePluginsDir                 // a stateDir bound over kubelet's shared SharedDevicePluginsDir
	socketPath                       // a Unix socket
	runtimeSocket                    // a socket in a directory systemd makes (RuntimeDirectory=): below /run
	derivedPath                      // made from another key's path (the NRI socket): checked as that one
)

// SharedDevicePluginsDir is the device plugins directory kubelet
// hard-codes (kubernetes#120626); each partition's own is bound there in
// its kubelet's mount namespace.
const SharedDevicePluginsDir = "/var/lib/kubelet/device-plugins"

// systemDirs are directories no partition may take as its own.
var systemDirs = map[string]bool{"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/lib": true,
	"/lib64": true, "/media": true, "/mnt": true, "/opt": true, "/proc": true, "/root": true, "/run": true, "/sbin": true,
	"/srv": true, "/sys": true, "/tmp": true, "/usr": true, "/var": true, "/var/lib": true, "/var/log": true, "/var/run": true,
	"/etc/kubernetes": true, "/etc/numa-partition": true, "/etc/systemd": true}

// systemTrees are where nothing of a partition's may lie.
var systemTrees = []string{"/proc", "/sys", "/dev", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/systemd"}

// writtenTrees are where files the tool or a kubelet writes may lie.
var writtenTrees = hostpaths.ConfigTrees

// toolPaths are numa-partition's own files and directories on a host.
// No path of a partition's may be one, lie in one or hold one, however
// it was derived (a template's {partition} or {root_dir}, a node dir's
// "-<partition>"): a partition's daemons, or a DaemonSet writing in its
// mount namespace, would write over or bind over the tool's config,
// plan, record, kept originals, lock or network state (#38).
var toolPaths = []string{hostpaths.ConfigPath, hostpaths.Abs(hostpaths.PlanRel), hostpaths.Abs(hostpaths.RecordRel),
	hostpaths.Abs(hostpaths.OriginalsRel), hostpaths.Abs(hostpaths.LockRel), hostpaths.NetworkStateDir}

// hugepageViews is the prefix of the partitions' hugepage views
// (hostpaths.HugepageViewRel), which render writes.
var hugepageViews = hostpaths.Abs(hostpaths.HugepageViewRel(""))

// toolDirs are numa-partition's own directories and the one kind of a
// partition's path each may hold, the kind the tool itself puts there
// (the defaults of config_path, allocator.state_dir, allocator.socket).
var toolDirs = []struct {
	dir   string
	holds pathKind
	what  string
}{
	{hostpaths.ConfigDir, writtenFile, "the kubelet and containerd configs render writes (config_path)"},
	{hostpaths.StateDir, stateDir, "the allocators' state dirs (allocator.state_dir)"},
	{hostpaths.RunDir, runtimeSocket, "the allocators' sockets (allocator.socket)"},
}

// toolPathProblem says why a path of that kind may not lie where it
// does among numa-partition's own files and directories, "" when it may.
// Reading one is harmless.
func toolPathProblem(p string, kind pathKind) string {
	if kind == readPath {
		return ""
	}
	for _, d := range toolDirs {
		if hostpaths.Under(d.dir, p) {
			return fmt.Sprintf("is or holds %s, numa-partition's own directory", d.dir)
		}
	}
	for _, o := range toolPaths {
		switch {
		case p == o:
			return "is one of numa-partition's own files and directories"
		case hostpaths.Under(p, o):
			return fmt.Sprintf("lies in %s, one of numa-partition's own files and directories", o)
		case hostpaths.Under(o, p):
			return fmt.Sprintf("holds %s, one of numa-partition's own files and directories", o)
		}
	}
	if strings.HasPrefix(p, hugepageViews) {
		return fmt.Sprintf("lies where numa-partition writes the partitions' hugepage views (%s<partition>)", hugepageViews)
	}
	for _, d := range toolDirs {
		if hostpaths.Under(p, d.dir) && kind != d.holds {
			return fmt.Sprintf("lies in %s, numa-partition's own directory, which holds only %s", d.dir, d.what)
		}
	}
	return ""
}

// placeProblem says why a path of that kind may not lie where it does.
func placeProblem(p string, kind pathKind) string {
	for _, t := range systemTrees {
		if hostpaths.Under(p, t) && kind != readPath {
			return fmt.Sprintf("lies under %s, which belongs to the system", t)
		}
	}
	switch kind {
	case writtenFile:
		if !slices.ContainsFunc(writtenTrees, func(t string) bool { return hostpaths.Under(p, t) && p != t }) {
			return "is outside the directories such files belong in (" + strings.Join(writtenTrees, ", ") + ")"
		}
	case ownDir:
		if systemDirs[p] {
			return "is a system directory, which a partition cannot own"
		}
	case stateDir, devicePluginsDir:
		if !strings.HasPrefix(p, "/var/lib/") {
			return "is not below /var/lib/, where systemd's StateDirectory= makes it"
		}
		if kind == devicePluginsDir && p == SharedDevicePluginsDir {
			return "is the shared path itself, which kubelet hard-codes and the partition's own directory is bound over: give the partition its own directory"
		}
	case runtimeSocket:
		if !strings.HasPrefix(path.Dir(p), "/run/") {
			return "is not in a directory below /run/, which systemd's RuntimeDirectory= makes"
		}
	case socketPath:
		if !hostpaths.Under(p, "/run") && !hostpaths.Under(p, "/var/run") {
			return "is not under /run, where sockets live"
		}
	}
	return toolPathProblem(p, kind)
}

// checkPath reports a path key's problems with its TOML key.
func checkPath(col *config.Collector, key, p string, kind pathKind) {
	if placeholderRe.MatchString(p) && col.Has(key) {
		return // an unknown placeholder left by expand, reported there
	}
	if msg := validation.PathProblem(p); msg != "" {
		col.Add(key, "%q %s", p, config.Whole(msg))
		return
	}
	if msg := placeProblem(p, kind); msg != "" {
		col.Add(key, "%q %s", p, config.Whole(msg))
	}
}

// CheckPaths checks the paths of a plan read from a file with the
// rules the plan was made by: CheckPlanFile calls it, so that a plan
// file can carry no path the planner would have refused.
func CheckPaths(plan *Plan) error {
	col := config.NewCollector(nil)
	checkPaths(plan, col, nil)
	return col.Err()
}

// checkPaths validates every path of the plan, and that no file or
// directory that must be one daemon's own is another's: of another
// partition (two kubelets in one root dir corrupt each other's state),
// of the same partition (kubeconfig = config_path: kubelet overwrites its
// own config), or inside another partition's own directory. keyOf, when
// not nil, names the config key a partition's value came from (a
// [[partition]]'s own binary); else the shared key is named.
func checkPaths(plan *Plan, col *config.Collector, keyOf func(partition int, key string) string) {
	if keyOf == nil {
		keyOf = func(_ int, key string) string { return key }
	}
	c := pathClaims{col: col, owner: map[string]pathUse{}}
	var all [][]pathEntry
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		entries := pathEntries(p, func(key string) string { return keyOf(i, key) }, col)
		checkNodeDirs(col, p)
		// A node dir's source is this partition's alone, derived from
		// network.node_dirs and checked there (checkNodeDirs); here it
		// meets the partitions' other paths.
		for _, d := range p.NodeDirs {
			entries = append(entries, pathEntry{"network.node_dirs", d.Source, derivedPath, true})
		}
		for _, e := range entries {
			if e.kind != derivedPath {
				checkPath(col, e.key, e.value, e.kind)
			}
			// In a node dir, one path is every partition's own.
			if e.own && !p.inNodeDir(e.value) {
				c.claim(e, i, p.Name)
			}
		}
		all = append(all, entries)
	}
	// A partition's own path inside another partition's own directory:
	// each path's ancestors are looked up, so this stays linear.
	for i, entries := range all {
		name := plan.Partitions[i].Name
		for _, e := range entries {
			if !e.own || underAny(e.value, c.shared) {
				continue
			}
			for dir := path.Dir(e.value); dir != "/" && dir != "."; dir = path.Dir(dir) {
				if prev, taken := c.owner[dir]; taken && prev.partition != name && prev.index != i {
					col.Add(e.key, "partition %s gets %s, inside %s, the %s of partition %s; give each partition its own tree", name, e.value, dir, prev.key, prev.partition)
					break
				}
			}
		}
	}
}

// pathEntry is one path of a partition, the key it is set by, its kind,
// and whether it must be this partition's alone.
type pathEntry struct {
	key, value string
	kind       pathKind
	own        bool
}

// pathEntries are partition p's paths, in the order their problems are
// reported; keyOf names the keys a partition may set on its own.
func pathEntries(p *Partition, keyOf func(key string) string, col *config.Collector) []pathEntry {
	k, rt, a := p.Kubelet, p.Runtime, p.Allocator
	entries := []pathEntry{
		{keyOf("kubelet.binary"), k.Binary, readPath, false},
		{"kubelet.config_path", k.ConfigPath, writtenFile, true},
		{"kubelet.root_dir", k.RootDir, ownDir, true},
		{"kubelet.cert_dir", k.CertDir, ownDir, true},
		{"kubelet.kubeconfig", k.Kubeconfig, writtenFile, true},
		// Only read: kubelet writes what it obtains to its own
		// kubeconfig, so one bootstrap file may serve every partition.
		{"kubelet.bootstrap_kubeconfig", k.BootstrapKubeconfig, readPath, false},
		{"kubelet.device_plugins_dir", k.DevicePluginsDir, devicePluginsDir, true},
		{"kubelet.pod_logs_dir", k.PodLogsDir, ownDir, true},
	}
	if k.StaticPodPath != "" {
		entries = append(entries, pathEntry{"kubelet.static_pod_path", k.StaticPodPath, ownDir, true})
	}
	if k.ConfigDir != "" {
		// Made from config_path, and render writes it as it does that.
		entries = append(entries, pathEntry{"kubelet.config_path", k.ConfigDir, writtenFile, true})
	}
	if rt.Kind == RuntimeContainerd {
		entries = append(entries,
			pathEntry{keyOf("runtime.binary"), rt.Binary, readPath, false},
			pathEntry{"runtime.config_path", rt.ConfigPath, writtenFile, true},
			pathEntry{"runtime.root_dir", rt.RootDir, ownDir, true},
			pathEntry{"runtime.state_dir", rt.StateDir, ownDir, true},
			pathEntry{"runtime.cni_conf_dir", rt.CNIConfDir, readPath, false},
			pathEntry{"runtime.cni_bin_dir", rt.CNIBinDir, readPath, false})
	}
	if socket, ok := strings.CutPrefix(rt.Endpoint, "unix://"); ok && strings.HasPrefix(socket, "/") {
		entries = append(entries, pathEntry{"runtime.endpoint", socket, socketPath, rt.Kind == RuntimeContainerd})
	} else if !col.Has("runtime.endpoint") { // a shared runtime's missing one is said once
		col.Add("runtime.endpoint", "%q is not a unix socket endpoint (form: unix:///path/to.sock)", rt.Endpoint)
	}
	if a.NRISocket != "" {
		entries = append(entries, pathEntry{"runtime.state_dir", a.NRISocket, derivedPath, true})
	}
	// The allocator's last, so that a clash with a runtime socket is
	// reported at the allocator's key.
	return append(entries,
		pathEntry{"allocator.socket", a.Socket, runtimeSocket, true},
		pathEntry{"allocator.state_dir", a.StateDir, stateDir, true})
}

// pathUse is who holds a path: partition index, its name, the key.
type pathUse struct {
	index          int
	partition, key string
}

// pathClaims are the paths the partitions hold as their own, and those
// found held twice.
type pathClaims struct {
	col   *config.Collector
	owner map[string]pathUse
	// shared are reported: what lies under them is the same mistake.
	shared []string
}

// claim holds e for partition index i, name, or reports who holds it.
func (c *pathClaims) claim(e pathEntry, i int, name string) {
	if underAny(e.value, c.shared) {
		return
	}
	prev, taken := c.owner[e.value]
	if !taken {
		c.owner[e.value] = pathUse{i, name, e.key}
		return
	}
	c.shared = append(c.shared, e.value)
	switch {
	case prev.index != i && prev.partition == name:
		// Two partitions of one name: reported as such.
	case prev.index == i:
		c.col.Add(e.key, "partition %s gets %s for both %s and %s; give each its own path", name, e.value, prev.key, e.key)
	case prev.key == e.key:
		c.col.Add(e.key, "partitions %s and %s both get %s; put {partition} in the template", prev.partition, name, e.value)
	default:
		c.col.Add(e.key, "partition %s gets %s, already the %s of partition %s; give each its own path", name, e.value, prev.key, prev.partition)
	}
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}
