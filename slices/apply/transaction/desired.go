package transaction

import (
	"fmt"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/preflight"
)

// NewDesired is what apply wants on the host: the bundle's files and
// units in start order, with the slices' cpusets, the hugepage pools and
// the ports as render typed them. It is pure, and reads nothing back from
// the rendered text: every service renders its own CPUAffinity=,
// NUMAPolicy= and NUMAMask= (templates/header.tmpl), which the kernel
// enforces on any cgroup version.
func NewDesired(b bundle.Bundle, mode CgroupMode) (Desired, error) {
	d := Desired{CgroupMode: mode}
	// The preflight lists the same refusal (its CgroupMode check).
	if err := preflight.CheckCgroupMode(b, mode); err != nil {
		return Desired{}, err
	}
	have := map[string]bool{}
	for _, f := range b.Files {
		if problem := record.WrittenPathProblem(f.Path); problem != "" {
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
			if !IsCgroupUnit(u.Name) {
				return d, fmt.Errorf("unit %s has a cpuset, but only slices and scopes take one", u.Name)
			}
			d.Slices = append(d.Slices, record.SliceSet{Unit: u.Name, CPUs: u.Cpuset.CPUs, Mems: u.Cpuset.Mems})
		}
	}
	owner := map[HugepageKey]bool{}
	for _, h := range b.Hugepages {
		k := HugepageKey{h.Node, h.PageSize}
		t := record.HugepageTarget{Node: h.Node, PageSize: h.PageSize, Count: h.Count}
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

// IsCgroupUnit says whether a unit is a slice or a scope: a cgroup that
// apply configures by properties, not a process it starts.
func IsCgroupUnit(name string) bool {
	return strings.HasSuffix(name, ".slice") || strings.HasSuffix(name, ".scope")
}
