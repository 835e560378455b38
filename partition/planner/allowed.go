package planner

import "slices"

// What the config allows, for its reference (package configref): copies
// of the lists validation checks against, so that a reader cannot change
// them.

func AllowedCPUManagerPolicies() []string      { return slices.Clone(cpuManagerPolicies) }
func AllowedMemoryManagerPolicies() []string   { return slices.Clone(memoryManagerPolicies) }
func AllowedTopologyManagerPolicies() []string { return slices.Clone(topologyManagerPolicies) }
func AllowedTopologyManagerScopes() []string   { return slices.Clone(topologyManagerScopes) }
func AllowedCPUManagerOptions() []string       { return slices.Clone(cpuManagerOptions) }

// DefaultCPUManagerPolicyOptions are the cpu_manager_policy_options the
// planner sets when the config gives none.
func DefaultCPUManagerPolicyOptions() map[string]string { return defaultCPUManagerPolicyOptions() }

// OwnLabelPrefix is the tool's own label and taint namespace, refused in
// the config's labels and taints.
const OwnLabelPrefix = ownLabelPrefix
