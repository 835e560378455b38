package tmcompare

import (
	"slices"

	"github.com/go-logr/logr"
	cadvisorapi "github.com/google/cadvisor/lib/model"
	ktm "k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"

	tm "github.com/numa-partition/numa-partition/partition/policy/topologymanager"
)

// input is one merge problem, in the project's types.
type input struct {
	policy    string
	machine   []int // node ids, 0..63 (kubelet's bitmask is one uint64)
	closest   bool
	dist      map[int]map[int]int
	providers []tm.ProviderHints
}

// pair is the same problem compiled for both implementations.
type pair struct {
	in      input
	ours    tm.Policy
	kubelet ktm.Policy
	khints  []map[string][]ktm.TopologyHint
}

// discard is the cheapest logger kubelet's Merge accepts: its Info calls
// return at once, so the kubelet timings are not inflated by logging.
var discard = logr.Discard()

func newPair(in input) (*pair, error) {
	opts := tm.PolicyOptions{PreferClosestNUMA: in.closest, MaxAllowableNUMANodes: max(8, len(in.machine))}
	ours, err := tm.New(tm.Options{Policy: in.policy, NUMANodes: in.machine, Distances: in.dist, PolicyOptions: opts})
	if err != nil {
		return nil, err
	}
	// kubelet gets the same options as its configuration carries them,
	// our map form, through its own parser.
	kopts, err := ktm.NewPolicyOptions(discard, opts.Map())
	if err != nil {
		return nil, err
	}
	var topo []cadvisorapi.Node
	for _, id := range slices.Sorted(slices.Values(in.machine)) {
		d := make([]uint64, 64)
		for j, v := range in.dist[id] {
			d[j] = uint64(v)
		}
		topo = append(topo, cadvisorapi.Node{Id: id, Distances: d})
	}
	info, err := ktm.NewNUMAInfo(topo, kopts)
	if err != nil {
		return nil, err
	}
	var k ktm.Policy
	switch in.policy {
	case tm.PolicyBestEffort:
		k = ktm.NewBestEffortPolicy(info, kopts)
	case tm.PolicyRestricted:
		k = ktm.NewRestrictedPolicy(info, kopts)
	case tm.PolicySingleNUMANode:
		k = ktm.NewSingleNumaNodePolicy(info, kopts)
	default:
		k = ktm.NewNonePolicy()
	}
	return &pair{in: in, ours: ours, kubelet: k, khints: toKubelet(in.providers)}, nil
}

// toKubelet converts the providers' hints. A list shared by two resources
// (as the memory manager shares one between memory and hugepages) stays
// one shared slice.
func toKubelet(providers []tm.ProviderHints) []map[string][]ktm.TopologyHint {
	type key struct {
		first *tm.Hint
		n     int
	}
	done := map[key][]ktm.TopologyHint{}
	var out []map[string][]ktm.TopologyHint
	for _, p := range providers {
		if p == nil {
			out = append(out, nil)
			continue
		}
		m := map[string][]ktm.TopologyHint{}
		for res, l := range p {
			if l == nil {
				m[res] = nil
				continue
			}
			if len(l) > 0 {
				if k, ok := done[key{&l[0], len(l)}]; ok {
					m[res] = k
					continue
				}
			}
			k := make([]ktm.TopologyHint, len(l))
			for i, h := range l {
				k[i].Preferred = h.Preferred
				if h.Affinity != nil {
					k[i].NUMANodeAffinity, _ = bitmask.NewBitMask(h.Affinity.IDs()...)
				}
			}
			if len(l) > 0 {
				done[key{&l[0], len(l)}] = k
			}
			m[res] = k
		}
		out = append(out, m)
	}
	return out
}

func (p *pair) runOurs() (tm.Hint, bool) { return p.ours.Merge(p.in.providers) }

func (p *pair) runKubelet() (ktm.TopologyHint, bool) { return p.kubelet.Merge(discard, p.khints) }

// same compares the two answers: nil affinity only equals nil.
func same(o tm.Hint, oa bool, k ktm.TopologyHint, ka bool) bool {
	if oa != ka || o.Preferred != k.Preferred || (o.Affinity == nil) != (k.NUMANodeAffinity == nil) {
		return false
	}
	return o.Affinity == nil || slices.Equal(o.Affinity.IDs(), k.NUMANodeAffinity.GetBits())
}
