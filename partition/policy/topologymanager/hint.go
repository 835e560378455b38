// Package topologymanager merges NUMA topology hints exactly as kubelet 1.37's
// Topology Manager does (policies none, best-effort, restricted,
// single-numa-node; options prefer-closest-numa-nodes and
// max-allowable-numa-nodes), without enumerating the Cartesian product of
// the providers' hint lists. The layout follows kubelet's
// pkg/kubelet/cm/topologymanager: one file per policy, the merge in merge.go.
// Numbers like (5.1.8) in its comments are the points of
// docs/spec/kubelet-allocation-semantics.md, kubelet 1.37's observed
// behaviour, which the tests check point by point.
package topologymanager

import (
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// Hint is kubelet's TopologyHint. A nil Affinity means "don't care" (any
// NUMA node); a non-nil empty Affinity is a real, impossible affinity.
type Hint struct {
	Affinity  *bitmask.NodeSet `json:"affinity"`
	Preferred bool             `json:"preferred"`
}

// ProviderHints is one hint provider's answer: resource name -> hints.
// A nil or empty map means "no preference"; a nil list means "don't care"
// for that resource; a non-nil empty list means "no possible affinity".
type ProviderHints map[string][]Hint

// NewHint returns a hint for the given nodes.
func NewHint(preferred bool, ids ...int) Hint {
	s := bitmask.NewNodeSet(ids...)
	return Hint{Affinity: &s, Preferred: preferred}
}

// DontCare is the hint {nil, preferred}.
func DontCare(preferred bool) Hint { return Hint{Preferred: preferred} }

// Equal compares two hints, nil affinity distinct from an empty one.
func (h Hint) Equal(o Hint) bool {
	if h.Preferred != o.Preferred || (h.Affinity == nil) != (o.Affinity == nil) {
		return false
	}
	return h.Affinity == nil || *h.Affinity == *o.Affinity
}

// String is "{0-1 preferred}" / "{nil false}" for test failures and logs.
func (h Hint) String() string {
	a := "nil"
	if h.Affinity != nil {
		a = "[" + h.Affinity.String() + "]"
	}
	if h.Preferred {
		return "{" + a + " preferred}"
	}
	return "{" + a + " not-preferred}"
}
