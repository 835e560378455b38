package planner

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/internal/echo"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// Shares of what every kubelet on a host sees whole.
//
// kubelet's ephemeral-storage capacity is the filesystem holding its root
// dir (cadvisor: statfs f_frsize × f_blocks) and its pid capacity is
// min(kernel.pid_max, kernel.threads-max). N kubelets on one host would
// each promise all of it, N times the disk. So the plan gives each
// partition a share and renders the rest as systemReserved:
//
//	allocatable.ephemeral-storage = capacity − systemReserved − nodefs.available
//	kubepods pids.max             = limit − systemReserved.pid
//
// The split is by CPUs unless the config names amounts: on each
// filesystem, the partitions whose root dirs are on it and (on the
// filesystem of "/", where its logs, images and packages live) the host
// share capacity − nodefs.available in proportion to their CPUs. A
// partition alone on its filesystem gets all of it. The pid space is one,
// shared by every partition and the host the same way.

// HostFacts are what the planner needs from the host beyond its topology:
// the CLI answers from the running host (package hostfacts), tests from
// fixed values. Without them (nil) the plan gives no shares and warns.
type HostFacts interface {
	// Filesystem describes the filesystem that holds dir, or will hold
	// it once created (that of its nearest existing ancestor).
	Filesystem(dir string) (Filesystem, error)
	// TaskLimit is min(kernel.pid_max, kernel.threads-max), kubelet's
	// pid capacity.
	TaskLimit() (uint64, error)
}

// Filesystem is what statfs and stat say about the filesystem of a dir.
type Filesystem struct {
	Path string `json:"path"` // its mount point
	// Device (st_dev) tells filesystems apart. It is not in the plan's
	// JSON: a tmpfs gets another one at every boot, and the plan must not
	// change with it.
	Device        uint64 `json:"-"`
	CapacityBytes uint64 `json:"capacityBytes"` // f_frsize × f_blocks, as cadvisor counts
}

// NodefsEvictionPercent is the nodefs.available hard-eviction threshold
// every rendered kubelet gets (kubelet's own default, made explicit so
// the share's arithmetic cannot drift from it).
const NodefsEvictionPercent = 10

// NodefsEviction is what kubelet subtracts from ephemeral-storage
// capacity for its nodefs.available threshold: a percentage is parsed as a
// float32 ratio and applied to the capacity in float64, truncated
// (kubelet's eviction parsePercentage and GetThresholdQuantity).
func NodefsEviction(capacity uint64) uint64 {
	ratio := float32(NodefsEvictionPercent) / 100
	return uint64(int64(float64(int64(capacity)) * float64(ratio)))
}

// StorageShare is a partition's share of the filesystem under its
// kubelet root dir.
type StorageShare struct {
	Filesystem
	// SharedWith are the others on this filesystem: partitions, and
	// "host" on the filesystem of "/".
	SharedWith    []string `json:"sharedWith"`
	EvictionBytes uint64   `json:"evictionBytes"` // kubelet's nodefs.available reservation
	// ShareBytes is the Node's ephemeral-storage allocatable.
	ShareBytes uint64 `json:"shareBytes"`
	// SystemReservedBytes = capacity − eviction − share: what the
	// kubelet's systemReserved.ephemeral-storage says.
	SystemReservedBytes uint64 `json:"systemReservedBytes"`
}

// PIDShare is a partition's share of the host's pid space.
type PIDShare struct {
	Limit          uint64 `json:"limit"` // min(pid_max, threads-max)
	Share          uint64 `json:"share"` // kubepods pids.max
	SystemReserved uint64 `json:"systemReserved"`
}

// HostShares are what the host keeps: of the filesystem of "/" (when
// partitions' root dirs are on it) and of the pid space.
type HostShares struct {
	EphemeralStorageBytes uint64 `json:"ephemeralStorageBytes"`
	PIDs                  uint64 `json:"pids"`
}

// shareSpec is one share key's value: "auto" (by CPUs), "N%" of the
// whole, or an amount (a size for storage, a count for pids).
type shareSpec struct {
	key     string
	auto    bool
	percent uint64
	amount  uint64
}

// parseShare reads a share key; count says the amount is a number of
// pids rather than a size.
func parseShare(col *config.Collector, key, value string, count bool) shareSpec {
	s := shareSpec{key: key}
	allowed := `"auto", a percentage ("25%") or a size ("100Gi")`
	if count {
		allowed = `"auto", a percentage ("25%") or a number of pids ("32768")`
	}
	switch {
	case value == "" || value == config.ShareAuto:
		s.auto = true
	case strings.HasSuffix(value, "%"):
		p, err := strconv.ParseUint(strings.TrimSuffix(value, "%"), 10, 64)
		if err != nil || p > 100 {
			col.Add(key, "%q is not a whole percentage from 0%% to 100%%; allowed: %s", value, config.Whole(allowed))
			s.auto = true
		}
		s.percent = p
	case count:
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			col.Add(key, "%q is not a number of pids; allowed: %s", value, config.Whole(allowed))
		}
		s.amount = n
	default:
		b, err := units.ParseBytes(value)
		if err != nil {
			col.Add(key, "%v; allowed: %s", err, config.Whole(allowed))
		}
		s.amount = b
	}
	return s
}

// claim is one claimant of a shared pool.
type claim struct {
	name   string // partition name or "host"
	spec   shareSpec
	weight uint64 // CPUs
	share  uint64
}

// split divides pool among claims: named amounts and percentages (of
// whole) first, the rest in proportion to the auto claims' weights,
// rounded down to unit. what names the pool in the error.
func split(col *config.Collector, what string, whole, pool, unit uint64, claims []*claim) {
	var fixed, weights uint64
	var named []string
	for _, c := range claims {
		switch {
		case c.spec.auto:
			weights += c.weight
			continue
		case c.spec.percent > 0:
			hi, lo := bits.Mul64(whole, c.spec.percent)
			c.share, _ = bits.Div64(hi, lo, 100)
		default:
			c.share = c.spec.amount
		}
		fixed += c.share
		named = append(named, fmt.Sprintf("%s %s", echo.Value(c.name), formatAmount(c.share, unit)))
	}
	if fixed > pool {
		key := ""
		for _, c := range claims {
			if !c.spec.auto {
				key = c.spec.key
				break
			}
		}
		col.Add(key, "%s: the shares named (%s) add up to %s, more than the %s there is; lower them", config.Whole(what),
			config.Whole(strings.Join(named, ", ")), formatAmount(fixed, unit), formatAmount(pool, unit))
		return
	}
	rest := pool - fixed
	for _, c := range claims {
		if c.spec.auto && weights > 0 {
			hi, lo := bits.Mul64(rest, c.weight)
			q, _ := bits.Div64(hi, lo, weights) // q ≤ rest: no overflow
			c.share = q / unit * unit
		}
	}
}

func formatAmount(v, unit uint64) string {
	if unit == 1 {
		return strconv.FormatUint(v, 10)
	}
	return units.FormatBytes(v)
}
