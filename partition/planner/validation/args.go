package validation

import (
	"fmt"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/internal/echo"
)

// safeArg is what a rendered command line carries unquoted: no
// whitespace, quotes, '$' (expansion), '%' (systemd specifiers), '\',
// ';' or non-ASCII. It covers paths, flags, label and taint syntax.
var safeArg = regexp.MustCompile(`^[A-Za-z0-9._/:=,@+\-]+$`)

// safePath is safeArg without ':', which systemd reads as a separator in
// BindPaths= ("/var/lib/kubelet:x" dropped the device-plugins bind) and
// kubelet and containerd in their path lists: an argument may hold one
// ("--foo=a:b"), a path may not.
var safePath = regexp.MustCompile(`^[A-Za-z0-9._/=,@+\-]+$`)

// Limits that keep a config from rendering a unit systemd refuses.
const (
	MaxExtraArgs = 256
	MaxArgLength = 4096
	// MaxExtraArgsBytes bounds a kubelet's extra arguments together. The
	// whole command line runs as one `/bin/sh -c` word in the partition's
	// mount namespace, and the kernel refuses a single argument over 128
	// KiB (MAX_ARG_STRLEN): 40 arguments of 4,000 bytes planned, rendered
	// and applied, and kubelet restarted forever on "Argument list too
	// long" (#38). 64 KiB leaves the rest for the flags the tool sets
	// (paths of at most MaxArgLength each).
	MaxExtraArgsBytes = 64 << 10
)

// ArgProblem says what is wrong with a command-line argument, "" when
// nothing.
func ArgProblem(a string) string {
	switch {
	case a == "":
		return "is empty"
	case len(a) > MaxArgLength:
		return fmt.Sprintf("is %d bytes long, more than %d", len(a), MaxArgLength)
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
		return fmt.Sprintf("is not a clean path (no '..', '.', '//' or trailing '/'): write %q", echo.Value(path.Clean(p)))
	case len(p) > MaxArgLength:
		return fmt.Sprintf("is %d bytes long, more than %d", len(p), MaxArgLength)
	case !safePath.MatchString(p):
		return "has characters unit files and command lines cannot carry unquoted or read as separators; allowed are letters, digits and ._-/+@=, (no spaces, newlines, ':', quotes, '%', '\\' or non-ASCII)"
	}
	return ""
}

// managedFlags are the kubelet flags numa-partition decides for each
// partition, with the config key that sets the value instead ("" when the
// tool decides it alone). kubelet's flags win over its config file, so a
// flag in extra_args would override the rendered KubeletConfiguration as
// surely as the command line the unit sets.
var managedFlags = map[string]string{
	// The command line of each kubelet (slices/render kubeletArgs).
	"--config": "kubelet.config_path", "--kubeconfig": "kubelet.kubeconfig",
	"--bootstrap-kubeconfig": "kubelet.bootstrap_kubeconfig", "--cert-dir": "kubelet.cert_dir",
	"--root-dir": "kubelet.root_dir", "--hostname-override": "kubelet.node_name",
	"--node-ip": "partition[].address", "--node-labels": "kubelet.labels",
	// Its drop-ins, checked field by field, are the config's.
	"--config-dir": "kubelet.drop_in",
	// The partition's identity in its KubeletConfiguration (kubeletgen):
	// its runtime, cgroups, ports and files.
	"--container-runtime-endpoint": "runtime.endpoint", "--image-service-endpoint": "runtime.endpoint",
	"--cgroup-driver": "", "--cgroup-root": "", "--cgroups-per-qos": "", "--kubelet-cgroups": "", "--system-cgroups": "",
	"--port": "kubelet.port", "--healthz-port": "kubelet.healthz_port", "--healthz-bind-address": "",
	"--read-only-port": "kubelet.read_only_port", "--pod-manifest-path": "kubelet.static_pod_path",
	"--max-pods": "kubelet.max_pods", "--register-with-taints": "kubelet.taints",
	"--cluster-dns": "kubelet.cluster_dns", "--cluster-domain": "kubelet.cluster_domain", "--resolv-conf": "network.resolv_conf",
	"--fail-cgroupv1": "",
	// Its serving security.
	"--anonymous-auth": "", "--authentication-token-webhook": "", "--client-ca-file": "",
	"--authorization-mode": "", "--rotate-certificates": "",
	// Its share of the machine.
	"--cpu-manager-policy": "kubelet.cpu_manager_policy", "--cpu-manager-policy-options": "kubelet.cpu_manager_policy_options",
	"--reserved-cpus": "host.reserved_cpus", "--kube-reserved": "kubelet.kube_reserved_memory",
	"--system-reserved": "kubelet.system_reserved_memory", "--eviction-hard": "kubelet.eviction_hard_memory",
	"--enforce-node-allocatable": "", "--memory-manager-policy": "kubelet.memory_manager_policy",
	"--reserved-memory": "host.reserved_memory", "--topology-manager-policy": "kubelet.topology_manager_policy",
	"--topology-manager-scope":          "kubelet.topology_manager_scope",
	"--topology-manager-policy-options": "kubelet.topology_manager_options",
}

// deniedFlags are kubelet flags no partition's kubelet may get, with
// why: each stops the kubelet, keeps its Node out of the cluster or makes
// it act as something else, and none is a setting a partition needs
// (#38: --version=true made kubelet exit at every start, a restart loop;
// --lock-file made every partition's kubelet wait for one lock). A closed
// allow list was the other choice: docs/config.md says why not.
var deniedFlags = map[string]string{
	"--version":                 "it prints the version and exits, so the unit restarts forever",
	"--help":                    "it prints the usage and exits, so the unit restarts forever",
	"--runonce":                 "it runs the static pods once and exits",
	"--register-node":           "the partition's Node must register with the API server, or no pod reaches it",
	"--register-schedulable":    "the partition's Node must be schedulable; cordon it with kubectl instead",
	"--lock-file":               "every partition's kubelet would wait for, or exit on, one lock",
	"--exit-on-lock-contention": "it goes with --lock-file, which a partition's kubelet may not have",
	"--provider-id":             "it names the cloud instance the Node is, which every partition would claim",
	"--manifest-url":            "it runs the static pods a URL serves in every partition; use kubelet.static_pod_path",
	"--manifest-url-header":     "it goes with --manifest-url, which a partition's kubelet may not have",
	"--runtime-cgroups":         "numa-partition places the partition's runtime in its slice",
	"--kube-reserved-cgroup":    "numa-partition decides the partition's cgroups",
	"--system-reserved-cgroup":  "numa-partition decides the partition's cgroups",
}

// ManagedFlags lists managedFlags, sorted, for the reference.
func ManagedFlags() []string { return slices.Sorted(maps.Keys(managedFlags)) }

// DeniedFlags lists deniedFlags, sorted, for the reference.
func DeniedFlags() []string { return slices.Sorted(maps.Keys(deniedFlags)) }

// ExtraArgsProblems says what is wrong with a kubelet's extra arguments
// as a whole and each one, nil when nothing: the planner reports each
// with the key, render refuses a plan file's first.
func ExtraArgsProblems(args []string) []string {
	if len(args) > MaxExtraArgs {
		return []string{fmt.Sprintf("has %d arguments, more than %d", len(args), MaxExtraArgs)}
	}
	var problems []string
	total := 0
	for _, a := range args {
		total += len(a) + 1 // and the separator
		if msg := ExtraArgProblem(a); msg != "" {
			problems = append(problems, msg)
		}
	}
	if total > MaxExtraArgsBytes {
		problems = append(problems, fmt.Sprintf("holds %d bytes of arguments, more than %d (64 KiB): the kernel refuses a kubelet command line of more than 128 KiB and kubelet would never start", total, MaxExtraArgsBytes))
	}
	return problems
}

// ExtraArgProblem says what is wrong with one of kubelet's extra
// arguments, "" when nothing. Plan checks extra_args with it and render
// a plan's, since a plan read from a file was not planned by this build.
func ExtraArgProblem(a string) string {
	if msg := ArgProblem(a); msg != "" {
		return fmt.Sprintf("argument %q %s", echo.Value(a), msg)
	}
	name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
	switch {
	case !strings.HasPrefix(a, "--") || name == "" || name[0] == '-':
		return fmt.Sprintf("%q is not a flag (write \"--flag=value\")", echo.Value(a))
	case !hasValue:
		// kubelet would take the next argument as the value ("--flag
		// value"), so what a flag sets would depend on its neighbour.
		return fmt.Sprintf("%q has no value (write \"--flag=value\", or \"--flag=true\" for a switch)", echo.Value(a))
	}
	// kubelet's flag set reads '_' as '-' (cliflag.WordSepNormalizeFunc):
	// --root_dir is --root-dir.
	flag := "--" + strings.ReplaceAll(name, "_", "-")
	if instead, managed := managedFlags[flag]; managed {
		use := "numa-partition decides it"
		if instead != "" {
			use = "set " + instead + " instead"
		}
		return fmt.Sprintf("%q sets %s, which numa-partition sets for each partition (%s; the managed flags are listed under kubelet.extra_args in docs/config-reference.md)", echo.Value(a), flag, use)
	}
	if why, denied := deniedFlags[flag]; denied {
		return fmt.Sprintf("%q sets %s, which no partition's kubelet may have: %s (the refused flags are listed under kubelet.extra_args in docs/config-reference.md)", echo.Value(a), flag, why)
	}
	return ""
}

// IsImageReference says whether s is an image reference, the only form a
// sandbox image may take (it is written into containerd's TOML).
func IsImageReference(s string) bool { return imageReference.MatchString(s) }

// imageReference is the grammar of distribution/reference, without its
// length limits: a lowercase path of components, an optional tag and an
// optional digest.
var imageReference = regexp.MustCompile(`^` +
	`([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]+)?/)?` + // registry
	`[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*` + // path
	`(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`) // tag, digest

// MaxPodsProblem says what is wrong with a kubelet's max pods, "" when
// nothing: kubelet's maxPods is an int32, which a larger number would
// wrap around (9223372036854775807 was planned). kubeletgen checks a
// plan's with it too.
func MaxPodsProblem(n int) string {
	if n < 1 || n > math.MaxInt32 {
		return fmt.Sprintf("%d: allowed are 1-%d (kubelet's maxPods is a 32-bit integer)", n, math.MaxInt32)
	}
	return ""
}
