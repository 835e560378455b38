package planner

import (
	"errors"
	"net/netip"
	"strings"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
)

// FixedFacts are a declared host, for planning another machine and for
// tests: every dir is on Root unless a Mounts entry
// (a mount point) holds it, and the pid limit is Tasks.
type FixedFacts struct {
	Root   Filesystem
	Mounts []Filesystem // Path is the mount point
	Tasks  uint64
	// NetInterfaces are the host's interfaces; nil when not declared
	// (nothing is checked against them then).
	NetInterfaces []Interface
	// Cgroup is how the host mounts cgroups; "" when not declared.
	Cgroup cgroupmode.Mode
}

// CgroupMode is Cgroup.
func (f FixedFacts) CgroupMode() (cgroupmode.Mode, error) { return f.Cgroup, nil }

// CgroupFacts say how the host mounts cgroups: each kubelet is shown its
// partition as the machine on cgroup v1 only (kubeletgen/machine.go).
// HostFacts that do not implement it, or answer "", plan without it, and
// every kubelet is shown the whole machine.
type CgroupFacts interface {
	CgroupMode() (cgroupmode.Mode, error)
}

// Interfaces is NetInterfaces.
func (f FixedFacts) Interfaces() ([]Interface, error) { return f.NetInterfaces, nil }

// NetworkFacts are the host's network interfaces, for the checks of
// namespace mode (an uplink NIC that does not exist, an address the host
// already has). HostFacts that do not implement it plan without them.
type NetworkFacts interface {
	Interfaces() ([]Interface, error)
}

// Interface is one of the host's network interfaces.
type Interface struct {
	Name      string
	Addresses []netip.Prefix
	// DefaultRoute: a default route of the host (IPv4 or IPv6) leaves
	// by it.
	DefaultRoute bool
	// PCI is the address of the PCI function it is a netdev of, "" for
	// a virtual interface.
	PCI string
	// Namespace is the named network namespace (under /run/netns) it is
	// in, "" for the host's. sysfs shows a PCI function's interfaces in
	// the namespace that reads it only: a device a partition's namespace
	// holds is known to the plan through these facts.
	Namespace string
}

// Filesystem is the longest mount point holding dir, else Root.
func (f FixedFacts) Filesystem(dir string) (Filesystem, error) {
	best := f.Root
	for _, m := range f.Mounts {
		if (dir == m.Path || strings.HasPrefix(dir, strings.TrimSuffix(m.Path, "/")+"/")) && len(m.Path) > len(best.Path) {
			best = m
		}
	}
	return best, nil
}

// TaskLimit is Tasks.
func (f FixedFacts) TaskLimit() (uint64, error) {
	if f.Tasks == 0 {
		return 0, errors.New("no pid limit declared")
	}
	return f.Tasks, nil
}

// ExampleFacts are the declared host the repository's examples and golden
// renders are planned on: a 1 TiB root filesystem, kubelet's common pid
// limit (pid_max 4194304 on 64-bit kernels) and cgroup v1, where each
// kubelet is shown its partition as the machine.
var ExampleFacts = FixedFacts{Root: Filesystem{Path: "/", Device: 1, CapacityBytes: 1 << 40}, Tasks: 4194304, Cgroup: cgroupmode.V1}
