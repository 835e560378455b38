package topologymanager

// singleNUMANodePolicy keeps only preferred single-node or don't-care hints
// (5.1.2), merges, turns a machine-wide result into a nil affinity (5.1.7)
// and admits only a preferred result.
type singleNUMANodePolicy struct{ m *merger }

func (singleNUMANodePolicy) Name() string { return PolicySingleNUMANode }

func (p singleNUMANodePolicy) Merge(providers []ProviderHints) (Hint, bool) {
	d, preferred := p.m.mergeSingle(providers)
	if d == p.m.all {
		return DontCare(preferred), preferred
	}
	return p.m.result(d, preferred), preferred
}
