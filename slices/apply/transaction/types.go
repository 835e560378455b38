package transaction

import (
	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// Paths of numa-partition's own state, relative to the root
// (package hostpaths).
const (
	OriginalsDir = hostpaths.OriginalsRel
	LockPath     = hostpaths.LockRel
)

// Shortfall is a pool the kernel could not fill.
type Shortfall = hugepool.Shortfall

// Desired is what apply wants on the host: the bundle's files and units,
// plus what apply derives from them (slices' CPU sets, the cgroup v1
// drop-ins, hugepages).
type Desired struct {
	Files []bundle.File // sorted by Path
	Units []bundle.Unit // start order: phase, then name
	// Slices are the slice units' CPU and memory-node sets, as rendered.
	Slices    []record.SliceSet
	Hugepages []record.HugepageTarget
	// Ports are the TCP ports the plan's daemons will listen on.
	Ports      []PlannedPort
	CgroupMode CgroupMode
	// Network are the network objects the units make (the bundle's).
	Network *bundle.Network
	// Hostname, ReservedCPUs and Partitions are the bundle's, for the
	// record.
	Hostname     string
	ReservedCPUs bitmask.CPUSet
	Partitions   []record.Partition
}

// PlannedPort is a TCP port a partition's daemon will listen on.
type PlannedPort = bundle.Port

// Current is what Gather read from the host.
type Current struct {
	// Files holds the content of every path of the Desired files and of
	// the previous record; a missing path is absent from the map.
	Files map[string]FileState
	// Units holds the state of every unit of Desired and of the record.
	Units map[string]systemd.UnitInfo
	// Hugepages is nr_hugepages per node and size.
	Hugepages map[HugepageKey]uint64
	Record    *record.Record // nil before the first apply
	// CPUSetsV1 are the partition slices' cpuset v1 groups on a v1 or
	// hybrid host, "cpus/mems" ("" when the group is missing).
	CPUSetsV1 map[string]string
	// StaleSlices are slices of the record that are no longer planned
	// and still have runtime drop-ins or v1 groups (SliceLeftovers).
	StaleSlices []string
	// KubeletStates are the desired kubelets' manager state, by unit.
	KubeletStates map[string]KubeletStateOnHost
	// StaleNetwork are network objects of the record that are no longer
	// planned and still on the host (staleNetwork).
	StaleNetwork []StaleNetwork
}

// FileState is a file on disk.
type FileState = host.FileState

// HugepageKey names one node's pool of one page size.
type HugepageKey struct {
	Node     int
	PageSize uint64
}
