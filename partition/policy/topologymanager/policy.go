package topologymanager

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// Policy names, as in the kubelet configuration (topologyManagerPolicy).
const (
	PolicyNone           = "none"
	PolicyBestEffort     = "best-effort"
	PolicyRestricted     = "restricted"
	PolicySingleNUMANode = "single-numa-node"
)

// MaxNUMANodes is this implementation's limit on the nodes of one
// partition: masks are handled as 64-bit words internally.
const MaxNUMANodes = 64

// Tie-break strategies between masks of equal size (and equal distance
// with prefer-closest-numa-nodes).
const (
	// TieBreakPack is kubelet's: the numerically lowest mask wins.
	TieBreakPack = "pack"
	// TieBreakSpread: the least-loaded mask (Options.Load) wins, then the
	// numerically lowest. Not a kubelet behaviour.
	TieBreakSpread = "spread"
)

// Options configure a Policy.
type Options struct {
	Policy string
	// NUMANodes are the machine's (the partition's) node ids.
	NUMANodes []int
	// Distances[i][j] is the SLIT distance; required with PreferClosestNUMA.
	Distances map[int]map[int]int
	// PolicyOptions are kubelet's topologyManagerPolicyOptions.
	PolicyOptions
	// TieBreak: "" or TieBreakPack (kubelet), or TieBreakSpread.
	TieBreak string
	// Load scores a mask for TieBreakSpread (lower wins); required with it.
	Load func(bitmask.NodeSet) float64
}

// Policy merges the providers' hints into the best hint and an admit
// decision, like kubelet's topologymanager.Policy. The merged hint's
// Affinity may be shared with other results of the same policy: read it,
// never write through it. The result does not depend on the order of the
// providers, of the resources or of the hints in a list.
type Policy interface {
	Name() string
	Merge(providers []ProviderHints) (best Hint, admit bool)
}

// New validates the options and returns the policy (semantics 5.1.10).
func New(o Options) (Policy, error) {
	switch o.Policy {
	case PolicyNone, PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode:
	default:
		return nil, fmt.Errorf("topology manager policy %q: allowed are %s, %s, %s, %s", o.Policy, PolicyNone, PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode)
	}
	if err := o.PolicyOptions.Check(); err != nil {
		return nil, err
	}
	if err := CheckDistances(o.Distances); err != nil {
		return nil, err
	}
	maxAllowable := o.NUMANodeLimit()
	if len(o.NUMANodes) == 0 {
		return nil, errors.New("topology manager: no NUMA nodes")
	}
	if o.Policy == PolicyNone {
		return nonePolicy{}, nil
	}
	if len(o.NUMANodes) > maxAllowable {
		return nil, fmt.Errorf("topology manager policy %s: unsupported on machines with more than %d NUMA Nodes (%d nodes; raise %s)", o.Policy, maxAllowable, len(o.NUMANodes), OptionMaxAllowableNUMANodes)
	}
	m, err := newMerger(o)
	if err != nil {
		return nil, err
	}
	switch o.Policy {
	case PolicyBestEffort:
		return bestEffortPolicy{m}, nil
	case PolicyRestricted:
		return restrictedPolicy{m}, nil
	default:
		return singleNUMANodePolicy{m}, nil
	}
}

// MaxDistance is the largest NUMA distance: the kernel's are one byte
// (ACPI SLIT, 10 for a node itself, 255 for unreachable).
const MaxDistance = 255

// CheckDistances refuses a distance the kernel cannot report (#38:
// simulate took negative ones, which made far nodes the closest).
func CheckDistances(d map[int]map[int]int) error {
	for _, a := range slices.Sorted(maps.Keys(d)) {
		for _, b := range slices.Sorted(maps.Keys(d[a])) {
			if v := d[a][b]; v < 0 || v > MaxDistance {
				return fmt.Errorf("distances[%d][%d]: %d: allowed are 0-%d (the kernel's NUMA distances, 10 for a node itself)", a, b, v, MaxDistance)
			}
		}
	}
	return nil
}
