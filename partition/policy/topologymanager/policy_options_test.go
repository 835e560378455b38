package topologymanager

import (
	"fmt"
	"maps"
	"testing"
)

// optionSamples is a valid value, away from kubelet's default, of every
// option: TestPolicyOptionsRoundTrip fails for an option added to
// policyOptions without one.
var optionSamples = map[string]string{
	OptionMaxAllowableNUMANodes:  "16",
	OptionPreferClosestNUMANodes: "true",
}

// Issue 27: each consumer read the options map with its own call and
// unpacked its own return values. Every option goes map → PolicyOptions →
// map unchanged, alone and all together.
func TestPolicyOptionsRoundTrip(t *testing.T) {
	all := map[string]string{}
	for _, p := range policyOptions {
		v, ok := optionSamples[p.name]
		if !ok {
			t.Fatalf("option %s has no sample value in optionSamples", p.name)
		}
		all[p.name] = v
		in := map[string]string{p.name: v}
		o, err := NewPolicyOptions(in)
		if err != nil {
			t.Fatalf("%v: %v", in, err)
		}
		if o == (PolicyOptions{}) {
			t.Errorf("%v: read as kubelet's defaults", in)
		}
		if got := o.Map(); !maps.Equal(got, in) {
			t.Errorf("%v: Map gives %v", in, got)
		}
	}
	o, err := NewPolicyOptions(all)
	if err != nil {
		t.Fatal(err)
	}
	if want := (PolicyOptions{PreferClosestNUMA: true, MaxAllowableNUMANodes: 16}); o != want {
		t.Errorf("%v: got %+v, want %+v", all, o, want)
	}
	if got := o.Map(); !maps.Equal(got, all) {
		t.Errorf("%v: Map gives %v", all, got)
	}
	// Kubelet's defaults are no option at all, either way.
	if o, err := NewPolicyOptions(nil); err != nil || o != (PolicyOptions{}) || len(o.Map()) != 0 || o.NUMANodeLimit() != DefaultMaxAllowableNUMANodes {
		t.Errorf("no options: %+v %v, map %v, limit %d", o, err, o.Map(), o.NUMANodeLimit())
	}
	// What kubelet also reads ("T", an explicit default) means the same.
	if o, err := NewPolicyOptions(map[string]string{OptionPreferClosestNUMANodes: "T", OptionMaxAllowableNUMANodes: "8"}); err != nil ||
		o != (PolicyOptions{PreferClosestNUMA: true, MaxAllowableNUMANodes: 8}) || o.NUMANodeLimit() != 8 {
		t.Errorf("T and 8: %+v %v", o, err)
	}
}

// Unknown and invalid options are refused by one rule, Set, whichever
// way they come: a config key (the planner calls Set), a map (a plan
// file, a scenario) or options built in Go or read from the allocator's
// JSON config (Check, in New).
func TestPolicyOptionsRefused(t *testing.T) {
	for _, c := range []struct {
		name, value, want string
	}{
		{"turbo", "true", "unknown topology manager option (allowed: max-allowable-numa-nodes, prefer-closest-numa-nodes)"},
		{OptionPreferClosestNUMANodes, "yes", `"yes" is not a boolean (allowed: "true", "false")`},
		{OptionMaxAllowableNUMANodes, "7", `"7": allowed is a whole number of at least 8`},
		{OptionMaxAllowableNUMANodes, "-1", `"-1": allowed is a whole number of at least 8`},
		{OptionMaxAllowableNUMANodes, "sixteen", `"sixteen": allowed is a whole number of at least 8`},
	} {
		o := PolicyOptions{PreferClosestNUMA: true, MaxAllowableNUMANodes: 12}
		if got := o.Set(c.name, c.value); got != c.want {
			t.Errorf("Set(%s, %s) = %q, want %q", c.name, c.value, got, c.want)
		}
		if o != (PolicyOptions{PreferClosestNUMA: true, MaxAllowableNUMANodes: 12}) {
			t.Errorf("Set(%s, %s) changed the options: %+v", c.name, c.value, o)
		}
		want := "topology manager option " + c.name + ": " + c.want
		if _, err := NewPolicyOptions(map[string]string{c.name: c.value}); err == nil || err.Error() != want {
			t.Errorf("NewPolicyOptions(%s=%s): %v, want %s", c.name, c.value, err, want)
		}
	}
	for _, o := range []PolicyOptions{{MaxAllowableNUMANodes: 4}, {MaxAllowableNUMANodes: -1}} {
		want := fmt.Sprintf("topology manager option max-allowable-numa-nodes: \"%d\": allowed is a whole number of at least 8", o.MaxAllowableNUMANodes)
		if err := o.Check(); err == nil || !contains(err.Error(), want) {
			t.Errorf("Check(%+v): %v, want %s…", o, err, want)
		}
		if _, err := New(Options{Policy: PolicyBestEffort, NUMANodes: nodes(2), PolicyOptions: o}); err == nil || !contains(err.Error(), want) {
			t.Errorf("New with %+v: %v, want %s…", o, err, want)
		}
	}
}
