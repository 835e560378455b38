package render

import (
	"fmt"
	"strings"

	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// Where rendered files go, relative to the target root.
const (
	unitDir = hostpaths.UnitDirRel
	// dropInName sorts after distribution drop-ins (10-…) and before the
	// user's own (60-local.conf), which therefore win.
	dropInName = "50-numa-partition.conf"
	// HugepagesUnit allocates every node's hugepages before any kubelet.
	HugepagesUnit = "numa-partition-hugepages.service"
	// AllocatorTemplate is the allocator's template unit.
	AllocatorTemplate = "numa-allocator@.service"
)

// hostUnits are the units outside the partitions whose CPUs and memory
// nodes are locked to the host's: every process systemd starts outside a
// partition lives in one of them.
var hostUnits = []struct{ name, section string }{
	{"init.scope", "Scope"},
	{"machine.slice", "Slice"},
	{"system.slice", "Slice"},
	{"user.slice", "Slice"},
}

// hugepageViewDir holds partition name's view of the sysfs hugepage pool
// files, mirroring /sys (kubeletgen/hugepageview.go).
func hugepageViewDir(name string) string { return hostpaths.HugepageViewRel(name) }

// Unit names of a partition.
func kubeletUnit(name string) string    { return "kubelet-" + name + ".service" }
func containerdUnit(name string) string { return "containerd-" + name + ".service" }
func allocatorUnit(name string) string  { return "numa-allocator@" + name + ".service" }

func unitPath(unit string) string         { return unitDir + "/" + unit }
func dropInPath(unit string) string       { return unitDir + "/" + unit + ".d/" + dropInName }
func rootRelative(abs string) string      { return strings.TrimPrefix(abs, "/") }
func describe(field, value string) string { return fmt.Sprintf("%s %q", field, value) }

// absPath checks a path of the options (the binary's) by the planner's
// rule for the plan's paths, which a plan met where it entered.
func absPath(field, p string) error {
	if msg := validation.PathProblem(p); msg != "" {
		return fmt.Errorf("%s %s", describe(field, p), msg)
	}
	return nil
}
