// Package hostpaths is where numa-partition's own files live on a host,
// and the names of the kernel's files it reads and writes there: one
// place for every path more than one package uses (the planner, render,
// apply, the allocator daemon, kubeletgen, hugepool). A leaf: it imports
// nothing of the module.
//
// Paths with a leading slash are absolute on the host; the Rel forms are
// relative to a root (apply's and status's --root, a rendered tree).
package hostpaths

import (
	"path"
	"strconv"
	"strings"
)

// The tool's own files.
const (
	// ConfigPath is the default config.
	ConfigPath = "/etc/numa-partition/config.toml"
	// PlanRel keeps the plan the bundle was rendered from: the allocators
	// read their partition from it, a rolling apply the plan the host
	// runs.
	PlanRel = "etc/numa-partition/plan.json"
	// RecordRel is the applied record.
	RecordRel = "var/lib/numa-partition/applied.json"
	// OriginalsRel keeps files that existed before numa-partition first
	// wrote to their path, so remove can put them back.
	OriginalsRel = "var/lib/numa-partition/originals"
	// LockRel is apply's and remove's lock.
	LockRel = "run/numa-partition/apply.lock"
	// ConfigDir holds the config, the plan and the partitions' views of
	// the hugepage pools.
	ConfigDir = "/etc/numa-partition"
	// RunDir holds the lock and the allocators' sockets.
	RunDir = "/run/numa-partition"
	// NetworkStateDir keeps what `network uplink down` restores (the
	// IPv4 forwarding setting found before).
	NetworkStateDir = RunDir + "/network"
	// StateDir holds the record, kept originals and the allocators' state.
	StateDir = "/var/lib/numa-partition"
)

// Abs is a Rel path on the host.
func Abs(rel string) string { return "/" + rel }

// UnitDirRel is where the rendered units and drop-ins go.
const UnitDirRel = "etc/systemd/system"

// ConfigTrees are the directories the files a partition's kubelet or
// runtime is configured by may lie in (kubelet.config_path,
// runtime.config_path: the planner checks them), and with UnitDirRel
// those apply writes bundle files in (apply checks the bundle and the
// record against them): one list, so that what the planner allows apply
// writes, and what apply writes remove may delete.
var ConfigTrees = []string{ConfigDir, "/etc/kubernetes", "/etc/containerd", "/var/lib"}

// Under says whether p is tree or lies in it (both clean, and both
// absolute or both relative).
func Under(p, tree string) bool { return p == tree || strings.HasPrefix(p, tree+"/") }

// PartitionTemplate is the placeholder the allocator's defaults carry
// (the config's template syntax).
const PartitionTemplate = "{partition}"

// The allocator's defaults, as the config's templates.
const (
	AllocatorSocketTemplate   = RunDir + "/" + PartitionTemplate + ".sock"
	AllocatorStateDirTemplate = StateDir + "/" + PartitionTemplate
)

// AllocatorSocket and AllocatorStateDir are those defaults for a partition.
func AllocatorSocket(partition string) string {
	return strings.ReplaceAll(AllocatorSocketTemplate, PartitionTemplate, partition)
}

// AllocatorStateDir is the checkpoint directory of a partition's allocator.
func AllocatorStateDir(partition string) string {
	return strings.ReplaceAll(AllocatorStateDirTemplate, PartitionTemplate, partition)
}

// NRISocket is the NRI socket of a containerd with state dir stateDir.
func NRISocket(stateDir string) string { return path.Join(stateDir, "nri.sock") }

// HugepageViewRel is partition's view of the sysfs hugepage pool files,
// mirroring /sys (kubeletgen/hugepageview.go).
func HugepageViewRel(partition string) string {
	return strings.TrimPrefix(ConfigDir, "/") + "/sysfs-" + partition
}

// NodesDir is where the kernel lists the NUMA nodes.
const NodesDir = "/sys/devices/system/node"

// NodeDir is one NUMA node's directory.
func NodeDir(node int) string { return NodesDir + "/node" + strconv.Itoa(node) }

// NodePoolRel is the nr_hugepages file of one NUMA node and page size,
// relative to a sysfs root.
func NodePoolRel(node int, pageSize uint64) string {
	return "devices/system/node/node" + strconv.Itoa(node) + "/hugepages/" + PageDir(pageSize) + "/nr_hugepages"
}

// GlobalPoolRel is the machine-wide nr_hugepages file of a page size,
// relative to a sysfs root.
func GlobalPoolRel(pageSize uint64) string {
	return "kernel/mm/hugepages/" + PageDir(pageSize) + "/nr_hugepages"
}

// PageDir is the kernel's directory name of a page size: hugepages-2048kB.
func PageDir(pageSize uint64) string {
	return "hugepages-" + strconv.FormatUint(pageSize>>10, 10) + "kB"
}
