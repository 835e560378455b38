package topologymanager

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// Policy names, as in the kubelet configuration (topologyManagerPolicy).
const (
	PolicyNone           = "none"
	PolicyBestEffort     = "best-effort"
	PolicyRestricted     = "restricted"
	PolicySingleNUMANode = "single-numa-node"
)

// Policy option names (topologyManagerPolicyOptions).
const (
	OptionPreferClosestNUMANodes = "prefer-closest-numa-nodes"
	OptionMaxAllowableNUMANodes  = "max-allowable-numa-nodes"
)

// DefaultMaxAllowableNUMANodes is kubelet's limit without the option.
const DefaultMaxAllowableNUMANodes = 8

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
	// Distances[i][j] is the SLIT distance; required with PreferClosestNUMANodes.
	Distances              map[int]map[int]int
	PreferClosestNUMANodes bool
	// MaxAllowableNUMANodes: 0 means kubelet's default, 8.
	MaxAllowableNUMANodes int
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

// PolicyOptionNames are the options kubelet 1.37 accepts, sorted.
var PolicyOptionNames = []string{OptionMaxAllowableNUMANodes, OptionPreferClosestNUMANodes}

// OptionProblem says what is wrong with option name=value, "" when
// nothing: the one rule for kubelet's topologyManagerPolicyOptions
// (semantics 5.1.10), which the planner reports with the config's file,
// line and key and ParsePolicyOptions with the option's name.
func OptionProblem(name, value string) string {
	switch name {
	case OptionPreferClosestNUMANodes:
		if _, err := strconv.ParseBool(value); err != nil {
			return fmt.Sprintf("%q is not a boolean (allowed: \"true\", \"false\")", value)
		}
	case OptionMaxAllowableNUMANodes:
		if n, err := strconv.Atoi(value); err != nil || n < DefaultMaxAllowableNUMANodes {
			return fmt.Sprintf("%q: allowed is a whole number of at least %d", value, DefaultMaxAllowableNUMANodes)
		}
	default:
		return fmt.Sprintf("unknown topology manager option (allowed: %s)", strings.Join(PolicyOptionNames, ", "))
	}
	return ""
}

// ParsePolicyOptions reads kubelet's topologyManagerPolicyOptions map
// (semantics 5.1.10): every option must pass OptionProblem.
func ParsePolicyOptions(opts map[string]string) (preferClosest bool, maxAllowable int, err error) {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := opts[k]
		if msg := OptionProblem(k, v); msg != "" {
			return false, 0, fmt.Errorf("topology manager option %s: %s", k, msg)
		}
		switch k {
		case OptionPreferClosestNUMANodes:
			preferClosest, _ = strconv.ParseBool(v)
		case OptionMaxAllowableNUMANodes:
			maxAllowable, _ = strconv.Atoi(v)
		}
	}
	return preferClosest, maxAllowable, nil
}

// New validates the options and returns the policy (semantics 5.1.10).
func New(o Options) (Policy, error) {
	switch o.Policy {
	case PolicyNone, PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode:
	default:
		return nil, fmt.Errorf("topology manager policy %q: allowed are %s, %s, %s, %s", o.Policy, PolicyNone, PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode)
	}
	maxAllowable := o.MaxAllowableNUMANodes
	if maxAllowable == 0 {
		maxAllowable = DefaultMaxAllowableNUMANodes
	}
	if maxAllowable < DefaultMaxAllowableNUMANodes {
		return nil, fmt.Errorf("topology manager option %s=%d: must be at least %d", OptionMaxAllowableNUMANodes, o.MaxAllowableNUMANodes, DefaultMaxAllowableNUMANodes)
	}
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
