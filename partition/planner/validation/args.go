package validation

import (
	"fmt"
	"math"
	"path"
	"regexp"
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
	// MaxPathLength bounds a path of the plan. Render writes some behind
	// a flag of kubelet's ("--bootstrap-kubeconfig=PATH", the longest of
	// kubeletSettings' flags), and the argument must still be one
	// ArgProblem takes: with this bound the path rule alone holds every
	// such argument within MaxArgLength.
	MaxPathLength = MaxArgLength - 64
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
	case len(p) > MaxPathLength:
		return fmt.Sprintf("is %d bytes long, more than %d", len(p), MaxPathLength)
	case !safePath.MatchString(p):
		return "has characters unit files and command lines cannot carry unquoted or read as separators; allowed are letters, digits and ._-/+@=, (no spaces, newlines, ':', quotes, '%', '\\' or non-ASCII)"
	}
	return ""
}

// ExtraArgsProblems says what is wrong with a kubelet's extra arguments
// as a whole and each one, nil when nothing: the planner reports each
// with the key, planner.CheckPlanFile refuses a plan file's first.
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
// arguments, "" when nothing. Plan checks extra_args with it and
// planner.CheckPlanFile a plan file's, which this build did not plan.
// The flags it refuses are kubeletSettings'.
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
// wrap around (9223372036854775807 was planned). A plan file's is held
// to it too (planner.CheckPlanFile), so kubeletgen converts it as it is.
func MaxPodsProblem(n int) string {
	if n < 1 || n > math.MaxInt32 {
		return fmt.Sprintf("%d: allowed are 1-%d (kubelet's maxPods is a 32-bit integer)", n, math.MaxInt32)
	}
	return ""
}
