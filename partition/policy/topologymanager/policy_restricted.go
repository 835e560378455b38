package topologymanager

// restrictedPolicy merges and admits only a preferred result (5.1.8).
type restrictedPolicy struct{ m *merger }

func (restrictedPolicy) Name() string { return PolicyRestricted }

func (p restrictedPolicy) Merge(providers []ProviderHints) (Hint, bool) {
	best := p.m.merge(providers)
	return best, best.Preferred
}
