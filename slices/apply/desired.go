package apply

import (
	"fmt"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
	bundle "github.com/numa-partition/numa-partition/slices/render"
)

// V1DropIn is the drop-in apply adds to every partition service on cgroup
// v1 hosts, where systemd stores but does not enforce AllowedCPUs=.
const V1DropIn = "90-numa-partition-cgroup-v1.conf"

// NewDesired derives what apply wants on the host from the plan and its
// rendered bundle. It is pure. On cgroup v1 it adds, to each partition
// service that does not pin itself, a drop-in with CPUAffinity=,
// NUMAPolicy=bind and NUMAMask= from its slice: exec-level settings that
// the kernel enforces on any cgroup version.
func NewDesired(plan *planner.Plan, b bundle.Bundle, mode CgroupMode) (Desired, error) {
	d := Desired{CgroupMode: mode}
	if err := checkAllocatorModes(plan, mode); err != nil {
		return d, err
	}
	files := map[string]bundle.File{}
	for _, f := range b.Files {
		if err := checkRelPath(f.Path); err != nil {
			return d, err
		}
		files[f.Path] = f
	}
	d.Units = slices.Clone(b.Units)
	slices.SortStableFunc(d.Units, func(a, b bundle.Unit) int {
		if a.Phase != b.Phase {
			return int(a.Phase) - int(b.Phase)
		}
		return strings.Compare(a.Name, b.Name)
	})
	slicesByPartition := map[string]SliceSet{}
	for _, u := range d.Units {
		if !isCgroupUnit(u.Name) {
			continue
		}
		s, ok, err := sliceSet(u, files)
		if err != nil {
			return d, err
		}
		if !ok {
			continue
		}
		d.Slices = append(d.Slices, s)
		if u.Partition != "" {
			slicesByPartition[u.Partition] = s
		}
	}
	if mode != CgroupV2 {
		for i, u := range d.Units {
			s, ok := slicesByPartition[u.Partition]
			if !ok || !strings.HasSuffix(u.Name, ".service") || pinsItself(u, files) {
				continue
			}
			p := path.Join("etc/systemd/system", u.Name+".d", V1DropIn)
			files[p] = bundle.File{Path: p, Mode: 0o644, Content: v1DropIn(s)}
			d.Units[i].Files = append(slices.Clone(u.Files), p)
		}
	}
	for _, f := range files {
		d.Files = append(d.Files, f)
	}
	slices.SortFunc(d.Files, func(a, b bundle.File) int { return strings.Compare(a.Path, b.Path) })
	if plan != nil {
		hs, err := hugepageTargets(plan)
		if err != nil {
			return d, err
		}
		d.Hugepages = hs
		ports, err := plannedPorts(plan, d.Units)
		if err != nil {
			return d, err
		}
		d.Ports = ports
	}
	return d, nil
}

// checkRelPath refuses bundle paths that would escape the root.
func checkRelPath(p string) error {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("bundle file path %q: must be relative to the root, clean, and inside it", p)
	}
	return nil
}

// isCgroupUnit says whether a unit is a slice or a scope: a cgroup that
// apply configures by properties, not a process it starts.
func isCgroupUnit(name string) bool {
	return strings.HasSuffix(name, ".slice") || strings.HasSuffix(name, ".scope")
}

// sliceSet reads AllowedCPUs= and AllowedMemoryNodes= of a slice from its
// unit file and drop-ins, in the order systemd reads them (unit file
// first, then drop-ins by name).
func sliceSet(u bundle.Unit, files map[string]bundle.File) (SliceSet, bool, error) {
	s := SliceSet{Unit: u.Name}
	section := "Slice"
	if strings.HasSuffix(u.Name, ".scope") {
		section = "Scope"
	}
	var cpus, mems string
	var haveCPUs, haveMems bool
	for _, p := range unitFilesInReadOrder(u) {
		f, ok := files[p]
		if !ok {
			return s, false, fmt.Errorf("unit %s lists file %s, which is not in the bundle", u.Name, p)
		}
		if v, ok := unitValue(f.Content, section, "AllowedCPUs"); ok {
			cpus, haveCPUs = v, true
		}
		if v, ok := unitValue(f.Content, section, "AllowedMemoryNodes"); ok {
			mems, haveMems = v, true
		}
	}
	if !haveCPUs && !haveMems {
		return s, false, nil
	}
	var err error
	if s.CPUs, err = bitmask.ParseCPUList(cpus); err != nil {
		return s, false, fmt.Errorf("%s: AllowedCPUs=%q: %w", u.Name, cpus, err)
	}
	if s.Mems, err = bitmask.ParseNodeList(mems); err != nil {
		return s, false, fmt.Errorf("%s: AllowedMemoryNodes=%q: %w", u.Name, mems, err)
	}
	return s, true, nil
}

func unitFilesInReadOrder(u bundle.Unit) []string {
	fs := slices.Clone(u.Files)
	slices.SortStableFunc(fs, func(a, b string) int {
		ad, bd := strings.HasSuffix(a, ".conf"), strings.HasSuffix(b, ".conf")
		switch {
		case ad == bd:
			return strings.Compare(path.Base(a), path.Base(b))
		case ad:
			return 1
		default:
			return -1
		}
	})
	return fs
}

// pinsItself says whether the rendered service already sets CPUAffinity=.
func pinsItself(u bundle.Unit, files map[string]bundle.File) bool {
	for _, p := range u.Files {
		if v, ok := unitValue(files[p].Content, "Service", "CPUAffinity"); ok && v != "" {
			return true
		}
	}
	return false
}

func v1DropIn(s SliceSet) []byte {
	return fmt.Appendf(nil, `# Written by numa-partition apply: this host runs cgroup v1, where systemd
# stores but does not enforce AllowedCPUs=/AllowedMemoryNodes= of %s.
# These exec-level settings are enforced by the kernel on any cgroup version.
[Service]
CPUAffinity=%s
NUMAPolicy=bind
NUMAMask=%s
`, s.Unit, s.CPUs, s.Mems)
}

// hugepageTargets lists each node's pools. A node belongs to one
// partition, so a pool planned twice is a broken plan.
func hugepageTargets(plan *planner.Plan) ([]HugepageTarget, error) {
	var hs []HugepageTarget
	owner := map[HugepageKey]string{}
	for _, p := range plan.Partitions {
		for _, m := range p.Memory {
			for _, h := range m.Hugepages {
				k := HugepageKey{m.Node, h.PageSize}
				t := HugepageTarget{Node: m.Node, PageSize: h.PageSize, Count: h.Count}
				if o, dup := owner[k]; dup {
					return nil, fmt.Errorf("plan: %s is planned by partitions %s and %s; a node belongs to one partition", t, o, p.Name)
				}
				owner[k] = p.Name
				hs = append(hs, t)
			}
		}
	}
	slices.SortFunc(hs, func(a, b HugepageTarget) int {
		if a.Node != b.Node {
			return a.Node - b.Node
		}
		return int(a.PageSize>>10) - int(b.PageSize>>10)
	})
	return hs, nil
}

// plannedPorts lists the TCP ports the plan's daemons will listen on and
// which unit will own each.
func plannedPorts(plan *planner.Plan, units []bundle.Unit) ([]PlannedPort, error) {
	unitOf := func(part string, ph bundle.Phase) string {
		for _, u := range units {
			if u.Partition == part && u.Phase == ph {
				return u.Name
			}
		}
		return ""
	}
	var ps []PlannedPort
	for _, p := range plan.Partitions {
		ku := unitOf(p.Name, bundle.PhaseKubelet)
		for _, kp := range []struct {
			port int
			what string
		}{{p.Kubelet.Port, "port"}, {p.Kubelet.HealthzPort, "healthzPort"}, {p.Kubelet.ReadOnlyPort, "readOnlyPort"}} {
			if kp.port > 0 {
				ps = append(ps, PlannedPort{Port: kp.port, Owner: fmt.Sprintf("%s kubelet %s", p.Name, kp.what), Unit: ku})
			}
		}
		if a := p.Allocator.MetricsAddr; a != "" {
			_, port, err := net.SplitHostPort(a)
			if err != nil {
				return nil, fmt.Errorf("partition %s: allocator metricsAddr %q: %w", p.Name, a, err)
			}
			n, err := strconv.Atoi(port)
			if err != nil || n <= 0 || n > 65535 {
				return nil, fmt.Errorf("partition %s: allocator metricsAddr %q: port must be 1-65535", p.Name, a)
			}
			ps = append(ps, PlannedPort{Port: n, Owner: p.Name + " allocator metricsAddr", Unit: unitOf(p.Name, bundle.PhaseAllocator)})
		}
	}
	return ps, nil
}

// checkAllocatorModes refuses nri mode on cgroup v1: kubelet 1.37 with
// cpuManagerPolicy none writes every CPU of the machine into its pods'
// cpuset, which cgroup v1 refuses below a partition's narrower cpuset
// (kubelet then fails "Failed to start ContainerManager ... permission
// denied"); cgroup v2 takes the write and keeps the effective set.
func checkAllocatorModes(plan *planner.Plan, mode CgroupMode) error {
	if mode == CgroupV2 {
		return nil
	}
	for _, p := range plan.Partitions {
		if p.Allocator.Mode == planner.AllocatorModeNRI {
			return fmt.Errorf("partition %s: allocator mode %q needs cgroup v2, and this host is %s: kubelet with cpuManagerPolicy none writes every CPU into its pods' cpuset, which cgroup v1 refuses below the partition's; use allocator_mode = %q here, or boot with systemd.unified_cgroup_hierarchy=1",
				p.Name, planner.AllocatorModeNRI, mode, planner.AllocatorModeKubelet)
		}
	}
	return nil
}
