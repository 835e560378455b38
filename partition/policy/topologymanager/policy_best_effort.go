package topologymanager

// bestEffortPolicy merges and always admits (5.1.8).
type bestEffortPolicy struct{ m *merger }

func (bestEffortPolicy) Name() string { return PolicyBestEffort }

func (p bestEffortPolicy) Merge(providers []ProviderHints) (Hint, bool) {
	return p.m.merge(providers), true
}
