package preflight

import (
	"fmt"
	"slices"
	"strings"
)

// The checks' names, as --ignore-preflight-errors takes them (matched
// without regard to case, as kubeadm does).
const (
	NameKubeletBinary    = "KubeletBinary"
	NameContainerdBinary = "ContainerdBinary"
	NameClientCA         = "ClientCA"
	NameKubeconfig       = "Kubeconfig"
	NameAPIServer        = "APIServer"
	NameCNIBinDir        = "CNIBinDir"
	NamePort             = "Port"
	NameSwap             = "Swap"
	NameCgroupDriver     = "CgroupDriver"
	// NameCgroupMode cannot be ignored: the bundle was rendered for
	// another cgroup mode, and apply refuses it whatever the preflight
	// says (slices/apply/transaction.NewDesired).
	NameCgroupMode = "CgroupMode"
)

// Names are every check's name, in the order they run.
var Names = []string{NameKubeletBinary, NameContainerdBinary, NameClientCA, NameKubeconfig,
	NameAPIServer, NameCNIBinDir, NamePort, NameSwap, NameCgroupDriver, NameCgroupMode}

// Ignorable says whether --ignore-preflight-errors may name check.
func Ignorable(check string) bool { return !strings.EqualFold(check, NameCgroupMode) }

// Ignore is the checks whose errors are made warnings.
type Ignore struct {
	all   bool
	names map[string]bool // lower case
}

// Has says whether the errors of check are made warnings.
func (i Ignore) Has(check string) bool {
	if !Ignorable(check) {
		return false
	}
	return i.all || i.names[strings.ToLower(check)]
}

// ParseIgnore reads --ignore-preflight-errors: check names or "all",
// comma-separated, each flag given once or more. A name no check has is
// an error naming the known ones, as is CgroupMode.
func ParseIgnore(values []string) (Ignore, error) {
	ig := Ignore{names: map[string]bool{}}
	for _, v := range values {
		for _, n := range strings.Split(v, ",") {
			n = strings.TrimSpace(n)
			switch {
			case n == "":
				continue
			case strings.EqualFold(n, "all"):
				ig.all = true
			case strings.EqualFold(n, NameCgroupMode):
				return Ignore{}, fmt.Errorf("--ignore-preflight-errors %s: cannot be ignored: the bundle was rendered for another cgroup mode than this host's, and apply refuses it anyway; plan again on this host", n)
			case !slices.ContainsFunc(Names, func(k string) bool { return strings.EqualFold(k, n) }):
				return Ignore{}, fmt.Errorf("--ignore-preflight-errors %s: no such check; the checks are %s, or all", n, strings.Join(ignorableNames(), ", "))
			default:
				ig.names[strings.ToLower(n)] = true
			}
		}
	}
	return ig, nil
}

func ignorableNames() []string {
	return slices.DeleteFunc(slices.Clone(Names), func(n string) bool { return !Ignorable(n) })
}
