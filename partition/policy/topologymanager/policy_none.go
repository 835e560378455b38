package topologymanager

// nonePolicy never looks at hints: {nil, false}, always admitted (5.1.8).
type nonePolicy struct{}

func (nonePolicy) Name() string { return PolicyNone }

func (nonePolicy) Merge([]ProviderHints) (Hint, bool) { return DontCare(false), true }
