package apply

import (
	"fmt"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/partition/planner/config"
	bundle "github.com/numa-partition/numa-partition/slices/render"
)

// NewDesired is what apply wants on the host: the bundle's files and
// units in start order, with the slices' cpusets, the hugepage pools and
// the ports as render typed them. It is pure, and reads nothing back from
// the rendered text: every service renders its own CPUAffinity=,
// NUMAPolicy= and NUMAMask= (templates/header.tmpl), which the kernel
// enforces on any cgroup version.
func NewDesired(b bundle.Bundle, mode CgroupMode) (Desired, error) {
	d := Desired{CgroupMode: mode}
	if err := checkCgroupV1Only(b.CgroupV1Only, mode); err != nil {
		return Desired{}, err
	}
	if err := checkCgroupV2Only(b.CgroupV2Only, mode); err != nil {
		return d, err
	}
	if err := checkUnifiedViews(b.UnifiedViews, mode); err != nil {
		return d, err
	}
	have := map[string]bool{}
	for _, f := range b.Files {
		if problem := writtenPathProblem(f.Path); problem != "" {
			return d, fmt.Errorf("bundle file path %q: %s", f.Path, problem)
		}
		have[f.Path] = true
	}
	d.Files = slices.Clone(b.Files)
	slices.SortFunc(d.Files, func(a, b bundle.File) int { return strings.Compare(a.Path, b.Path) })
	d.Units = slices.Clone(b.Units)
	slices.SortStableFunc(d.Units, func(a, b bundle.Unit) int {
		if a.Phase != b.Phase {
			return int(a.Phase) - int(b.Phase)
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, u := range d.Units {
		for _, p := range u.Files {
			if !have[p] {
				return d, fmt.Errorf("unit %s lists file %s, which is not in the bundle", u.Name, p)
			}
		}
		if u.Cpuset != nil {
			if !isCgroupUnit(u.Name) {
				return d, fmt.Errorf("unit %s has a cpuset, but only slices and scopes take one", u.Name)
			}
			d.Slices = append(d.Slices, SliceSet{Unit: u.Name, CPUs: u.Cpuset.CPUs, Mems: u.Cpuset.Mems})
		}
	}
	owner := map[HugepageKey]bool{}
	for _, h := range b.Hugepages {
		k := HugepageKey{h.Node, h.PageSize}
		t := HugepageTarget{Node: h.Node, PageSize: h.PageSize, Count: h.Count}
		if owner[k] {
			return d, fmt.Errorf("bundle: %s is listed twice", t)
		}
		owner[k] = true
		d.Hugepages = append(d.Hugepages, t)
	}
	d.Ports = slices.Clone(b.Ports)
	d.Network = b.Network
	d.Hostname, d.ReservedCPUs, d.Partitions = b.Hostname, b.ReservedCPUs, slices.Clone(b.Partitions)
	return d, nil
}

// isCgroupUnit says whether a unit is a slice or a scope: a cgroup that
// apply configures by properties, not a process it starts.
func isCgroupUnit(name string) bool {
	return strings.HasSuffix(name, ".slice") || strings.HasSuffix(name, ".scope")
}

// checkCgroupV1Only refuses, on cgroup v2, a kubelet shown its partition
// as the machine by a bundle rendered for a v1 host (a plan made with
// another host's facts): its usage view binds and serves v1 files, and
// its unit does not hide openat2, so on v2 it would read the host's
// usage against its partition's MemTotal.
func checkCgroupV1Only(partitions []string, mode CgroupMode) error {
	if mode != CgroupV2 || len(partitions) == 0 {
		return nil
	}
	return fmt.Errorf("partition %s: its kubelet was rendered for a cgroup v1 host (its usage view), and this host is %s: the plan was made with another host's facts (cgroupMode); plan again on this host, or with --host-facts naming cgroupMode %q",
		partitions[0], mode, CgroupV2)
}

// checkUnifiedViews refuses, on cgroup v1, a kubelet rendered to read its
// slice's cgroup v2 usage files with openat2 hidden (a plan made with a
// v2 host's facts): on v1 it would refuse the holder's served memory
// files and report a memory usage of 0.
func checkUnifiedViews(partitions []string, mode CgroupMode) error {
	if mode == CgroupV2 || len(partitions) == 0 {
		return nil
	}
	return fmt.Errorf("partition %s: its kubelet was rendered for a cgroup v2 host (it reads its slice's usage with openat2 hidden), and this host is %s: the plan was made with another host's facts (cgroupMode); plan again on this host, or with --host-facts naming this host's cgroupMode",
		partitions[0], mode)
}

// checkCgroupV2Only refuses nri mode on cgroup v1: kubelet 1.37 with
// cpuManagerPolicy none writes every CPU of the machine into its pods'
// cpuset, which cgroup v1 refuses below a partition's narrower cpuset
// (kubelet then fails "Failed to start ContainerManager ... permission
// denied"); cgroup v2 takes the write and keeps the effective set.
func checkCgroupV2Only(partitions []string, mode CgroupMode) error {
	if mode == CgroupV2 || len(partitions) == 0 {
		return nil
	}
	return fmt.Errorf("partition %s: allocator mode %q needs cgroup v2, and this host is %s: kubelet with cpuManagerPolicy none writes every CPU into its pods' cpuset, which cgroup v1 refuses below the partition's; use allocator_mode = %q here, or boot with systemd.unified_cgroup_hierarchy=1",
		partitions[0], config.AllocatorModeNRI, mode, config.AllocatorModeKubelet)
}
