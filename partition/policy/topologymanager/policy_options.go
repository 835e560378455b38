package topologymanager

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Policy option names (topologyManagerPolicyOptions).
const (
	OptionPreferClosestNUMANodes = "prefer-closest-numa-nodes"
	OptionMaxAllowableNUMANodes  = "max-allowable-numa-nodes"
)

// DefaultMaxAllowableNUMANodes is kubelet's limit without the option.
const DefaultMaxAllowableNUMANodes = 8

// PolicyOptions are kubelet's topologyManagerPolicyOptions, typed, as
// kubelet's own PolicyOptions (pkg/kubelet/cm/topologymanager/
// policy_options.go): NewPolicyOptions reads kubelet's map form, Map
// writes it back. The zero value is kubelet's defaults. The JSON tags
// are the allocator config's field names (allocator.Config embeds
// PolicyOptions), not kubelet's map form.
type PolicyOptions struct {
	// PreferClosestNUMA is prefer-closest-numa-nodes; it needs
	// Options.Distances.
	PreferClosestNUMA bool `json:"preferClosestNUMANodes"`
	// MaxAllowableNUMANodes is max-allowable-numa-nodes; 0 means
	// kubelet's default (NUMANodeLimit).
	MaxAllowableNUMANodes int `json:"maxAllowableNUMANodes"`
}

// policyOption is one option kubelet 1.37 accepts: its name, its rule
// and its field in one place, so that adding an option is a field of
// PolicyOptions and an entry of policyOptions, and the parser, the rule
// the planner reports with file, line and key, Map and the list of
// allowed names follow.
type policyOption struct {
	name string
	// read checks value against kubelet's rule (semantics 5.1.10) and sets
	// it on o; it returns what is wrong with value, "" when nothing.
	read func(o *PolicyOptions, value string) string
	// write is o's value in kubelet's form, "" when it is kubelet's
	// default (left out of the map, as kubelet reads no option as its
	// default).
	write func(o PolicyOptions) string
}

// policyOptions are the options, sorted by name (the order of the
// allowed names in messages).
var policyOptions = []policyOption{
	{
		name: OptionMaxAllowableNUMANodes,
		read: func(o *PolicyOptions, value string) string {
			n, err := strconv.Atoi(value)
			if err != nil || n < DefaultMaxAllowableNUMANodes {
				return fmt.Sprintf("%q: allowed is a whole number of at least %d", value, DefaultMaxAllowableNUMANodes)
			}
			o.MaxAllowableNUMANodes = n
			return ""
		},
		write: func(o PolicyOptions) string {
			if o.MaxAllowableNUMANodes == 0 {
				return ""
			}
			return strconv.Itoa(o.MaxAllowableNUMANodes)
		},
	},
	{
		name: OptionPreferClosestNUMANodes,
		read: func(o *PolicyOptions, value string) string {
			// kubelet reads it with strconv.ParseBool: "T" and "1" too.
			b, err := strconv.ParseBool(value)
			if err != nil {
				return fmt.Sprintf("%q is not a boolean (allowed: \"true\", \"false\")", value)
			}
			o.PreferClosestNUMA = b
			return ""
		},
		write: func(o PolicyOptions) string {
			if !o.PreferClosestNUMA {
				return ""
			}
			return strconv.FormatBool(true)
		},
	},
}

// Set reads option name=value into o and says what is wrong with it, ""
// when nothing: the one rule for kubelet's topologyManagerPolicyOptions
// (semantics 5.1.10), which the planner reports with the config's file,
// line and key, and NewPolicyOptions with the option's name. o is left
// as it was when the option is refused.
func (o *PolicyOptions) Set(name, value string) string {
	i := slices.IndexFunc(policyOptions, func(p policyOption) bool { return p.name == name })
	if i < 0 {
		names := make([]string, len(policyOptions))
		for j, p := range policyOptions {
			names[j] = p.name
		}
		return fmt.Sprintf("unknown topology manager option (allowed: %s)", strings.Join(names, ", "))
	}
	return policyOptions[i].read(o, value)
}

// NewPolicyOptions reads kubelet's topologyManagerPolicyOptions map:
// every option must pass Set. Options are read in name order, so that of
// several wrong ones the error names the same one every time.
func NewPolicyOptions(opts map[string]string) (PolicyOptions, error) {
	var o PolicyOptions
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if msg := o.Set(k, opts[k]); msg != "" {
			return PolicyOptions{}, fmt.Errorf("topology manager option %s: %s", k, msg)
		}
	}
	return o, nil
}

// Map is o in kubelet's map form, the options away from kubelet's
// defaults only; NewPolicyOptions(o.Map()) is o when o is valid.
func (o PolicyOptions) Map() map[string]string {
	m := map[string]string{}
	for _, p := range policyOptions {
		if v := p.write(o); v != "" {
			m[p.name] = v
		}
	}
	return m
}

// Check refuses options no map could give (a config built in Go or read
// from the allocator's JSON config): it reads o's map form back, so the
// rule is Set's.
func (o PolicyOptions) Check() error {
	_, err := NewPolicyOptions(o.Map())
	return err
}

// NUMANodeLimit is the most NUMA nodes kubelet's policies accept on the
// machine: max-allowable-numa-nodes, or kubelet's default without it.
func (o PolicyOptions) NUMANodeLimit() int {
	if o.MaxAllowableNUMANodes == 0 {
		return DefaultMaxAllowableNUMANodes
	}
	return o.MaxAllowableNUMANodes
}
