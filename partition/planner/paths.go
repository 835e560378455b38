package planner

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// The rules for every path and argument the plan puts into unit files,
// command lines and YAML. They live here, with the keys and lines of the
// config, so that plan and `config check` refuse what render and apply
// would; render checks plans read from files with the same functions.

// safeArg is what a rendered command line carries unquoted: no
// whitespace, quotes, '$' (expansion), '%' (systemd specifiers), '\',
// ';' or non-ASCII. It covers paths, flags, label and taint syntax.
var safeArg = regexp.MustCompile(`^[A-Za-z0-9._/:=,@+\-]+$`)

// Limits that keep a config from rendering a unit systemd refuses.
const (
	maxExtraArgs   = 256
	maxArgLength   = 4096
	maxConfigBytes = 1 << 20
)

// ArgProblem says what is wrong with a command-line argument, "" when
// nothing.
func ArgProblem(a string) string {
	switch {
	case a == "":
		return "is empty"
	case len(a) > maxArgLength:
		return fmt.Sprintf("is %d bytes long, more than %d", len(a), maxArgLength)
	case !safeArg.MatchString(a):
		return "has characters a unit's command line cannot carry unquoted; allowed are letters, digits and ._-/+@:=, (no spaces, quotes, '$', '%', '\\' or non-ASCII)"
	}
	return ""
}

// PathProblem says what is wrong with an absolute path of the plan, ""
// when nothing.
func PathProblem(p string) string {
	switch {
	case !strings.HasPrefix(p, "/"):
		return "is not an absolute path"
	case p == "/":
		return "is the root directory"
	case path.Clean(p) != p:
		return fmt.Sprintf("is not a clean path (no '..', '.', '//' or trailing '/'): write %q", path.Clean(p))
	case len(p) > maxArgLength:
		return fmt.Sprintf("is %d bytes long, more than %d", len(p), maxArgLength)
	case !safeArg.MatchString(p):
		return "has characters unit files and command lines cannot carry unquoted; allowed are letters, digits and ._-/+@:=, (no spaces, newlines, quotes, '%' or non-ASCII)"
	}
	return ""
}

// pathKind says what the tool does at a path, which decides where it may
// lie.
type pathKind int

const (
	readPath      pathKind = iota // a binary or file something reads
	writtenFile                   // a file render writes or kubelet writes
	ownDir                        // a directory a partition's daemons own
	stateDir                      // an ownDir systemd makes (StateDirectory=): below /var/lib
	socketPath                    // a Unix socket
	runtimeSocket                 // a socket in a directory systemd makes (RuntimeDirectory=): below /run
)

// systemDirs are directories no partition may take as its own.
var systemDirs = map[string]bool{"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/lib": true,
	"/lib64": true, "/media": true, "/mnt": true, "/opt": true, "/proc": true, "/root": true, "/run": true, "/sbin": true,
	"/srv": true, "/sys": true, "/tmp": true, "/usr": true, "/var": true, "/var/lib": true, "/var/log": true, "/var/run": true,
	"/etc/kubernetes": true, "/etc/numa-partition": true, "/etc/systemd": true}

// systemTrees are where nothing of a partition's may lie.
var systemTrees = []string{"/proc", "/sys", "/dev", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/systemd"}

// writtenTrees are where files the tool or a kubelet writes may lie.
var writtenTrees = []string{"/etc/numa-partition", "/etc/kubernetes", "/etc/containerd", "/var/lib"}

// ownFiles are the tool's own files, which nothing else may be written over.
var ownFiles = map[string]bool{DefaultConfigPath: true, "/etc/numa-partition/plan.json": true, "/var/lib/numa-partition/applied.json": true}

func under(p, tree string) bool { return p == tree || strings.HasPrefix(p, tree+"/") }

// placeProblem says why a path of that kind may not lie where it does.
func placeProblem(p string, kind pathKind) string {
	for _, t := range systemTrees {
		if under(p, t) && kind != readPath {
			return fmt.Sprintf("lies under %s, which belongs to the system", t)
		}
	}
	switch kind {
	case writtenFile:
		if ownFiles[p] || strings.HasPrefix(p, "/etc/numa-partition/sysfs-") {
			return "is one of numa-partition's own files"
		}
		for _, t := range writtenTrees {
			if under(p, t) && p != t {
				return ""
			}
		}
		return "is outside the directories such files belong in (" + strings.Join(writtenTrees, ", ") + ")"
	case ownDir:
		if systemDirs[p] {
			return "is a system directory, which a partition cannot own"
		}
	case stateDir:
		if !strings.HasPrefix(p, "/var/lib/") {
			return "is not below /var/lib/, where systemd's StateDirectory= makes it"
		}
	case runtimeSocket:
		if !strings.HasPrefix(path.Dir(p), "/run/") {
			return "is not in a directory below /run/, which systemd's RuntimeDirectory= makes"
		}
	case socketPath:
		if !under(p, "/run") && !under(p, "/var/run") {
			return "is not under /run, where sockets live"
		}
	}
	return ""
}

// checkPath reports a path key's problems with its TOML key.
func checkPath(col *collector, key, p string, kind pathKind) {
	if placeholderRe.MatchString(p) && col.has(key) {
		return // an unknown placeholder left by expand, reported there
	}
	what := fmt.Sprintf("%q", p)
	if msg := PathProblem(p); msg != "" {
		col.add(key, "%s %s", what, msg)
		return
	}
	if msg := placeProblem(p, kind); msg != "" {
		col.add(key, "%s %s", what, msg)
	}
}

// checkPaths validates every path of the plan, and that no two
// partitions share a file or directory that must be their own (two
// kubelets in one root dir corrupt each other's state).
func checkPaths(plan *Plan, col *collector) {
	type entry struct {
		key, value string
		kind       pathKind
		own        bool // must be this partition's alone
	}
	owner := map[string]string{}
	var shared []string // reported: what lies under them is the same mistake
	for i := range plan.Partitions {
		p := &plan.Partitions[i]
		k, rt, a := p.Kubelet, p.Runtime, p.Allocator
		entries := []entry{
			{"kubelet.binary", k.Binary, readPath, false},
			{"kubelet.config_path", k.ConfigPath, writtenFile, true},
			{"kubelet.root_dir", k.RootDir, ownDir, true},
			{"kubelet.cert_dir", k.CertDir, ownDir, true},
			{"kubelet.kubeconfig", k.Kubeconfig, writtenFile, true},
			// Only read: kubelet writes what it obtains to its own
			// kubeconfig, so one bootstrap file may serve every partition.
			{"kubelet.bootstrap_kubeconfig", k.BootstrapKubeconfig, readPath, false},
			{"kubelet.device_plugins_dir", k.DevicePluginsDir, stateDir, true},
			{"kubelet.pod_logs_dir", k.PodLogsDir, ownDir, true},
			{"allocator.socket", a.Socket, runtimeSocket, true},
			{"allocator.state_dir", a.StateDir, stateDir, true},
		}
		if k.StaticPodPath != "" {
			entries = append(entries, entry{"kubelet.static_pod_path", k.StaticPodPath, ownDir, true})
		}
		if rt.Kind == RuntimeContainerd {
			entries = append(entries,
				entry{"runtime.binary", rt.Binary, readPath, false},
				entry{"runtime.config_path", rt.ConfigPath, writtenFile, true},
				entry{"runtime.root_dir", rt.RootDir, ownDir, true},
				entry{"runtime.state_dir", rt.StateDir, ownDir, true},
				entry{"runtime.cni_conf_dir", rt.CNIConfDir, readPath, false},
				entry{"runtime.cni_bin_dir", rt.CNIBinDir, readPath, false})
		}
		if socket, ok := strings.CutPrefix(rt.Endpoint, "unix://"); ok {
			entries = append(entries, entry{"runtime.endpoint", socket, socketPath, rt.Kind == RuntimeContainerd})
		}
		for _, e := range entries {
			checkPath(col, e.key, e.value, e.kind)
			if !e.own || underAny(e.value, shared) {
				continue
			}
			if other, taken := owner[e.value]; taken && other != p.Name {
				shared = append(shared, e.value)
				col.add(e.key, "partitions %s and %s both get %s; put {partition} in the template", other, p.Name, e.value)
				continue
			}
			owner[e.value] = p.Name
		}
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
