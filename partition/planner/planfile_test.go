package planner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 24 item 15: --plan JSON was read loosely: unknown fields,
// case-changed keys and duplicate keys were accepted and the last
// duplicate won, so what a reviewer read could differ from what was
// applied. ParsePlan refuses each, naming the field.
func TestParsePlanIsStrict_Issue24Item15(t *testing.T) {
	plan := mustPlan(t, seedSpec, "")
	data, err := json.MarshalIndent(plan, "", "  ")
	require.NoError(t, err)
	got, err := ParsePlan("plan.json", data)
	require.NoError(t, err)
	assert.Equal(t, plan, got)

	// plan -o json adds nodeResources beside the plan's keys.
	withNodes := strings.Replace(string(data), "{", `{"nodeResources": [{"partition": "node0"}],`, 1)
	_, err = ParsePlan("plan.json", []byte(withNodes))
	require.NoError(t, err)

	for name, c := range map[string]struct{ from, to, want string }{
		"unknown field":   {`"hostname"`, `"extra": 1, "hostname"`, `plan.json: not a plan as this build writes it (fields are exact-case, once each; plan -o json writes one): unknown field "extra"`},
		"duplicate field": {`"hostname": "host1",`, `"hostname": "host1", "hostname": "other",`, `duplicate field "hostname"`},
		"case-changed":    {`"hostname"`, `"HostName"`, `unknown field "HostName"`},
		"nested unknown":  {`"rootDir"`, `"rootdir": "/x", "rootDir"`, `unknown field "partitions[0].kubelet.rootdir"`},
	} {
		t.Run(name, func(t *testing.T) {
			edited := strings.Replace(string(data), c.from, c.to, 1)
			require.NotEqual(t, string(data), edited, "the edit applies")
			_, err := ParsePlan("plan.json", []byte(edited))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err = ParsePlan("plan.json", []byte(`{"hostname": 1}`))
	assert.ErrorContains(t, err, "plan.json: not a plan (plan -o json): ")
}

// FuzzParsePlanFile: any bytes are refused with an error naming the file
// or decode into a plan that encodes and decodes to itself. Never a panic.
func FuzzParsePlanFile(f *testing.F) {
	plan := synthPlan(f)
	data, err := json.Marshal(plan)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"hostname": "a", "hostname": "b"}`))
	f.Add([]byte(`{"partitions": [{"name": "x", "Name": "y"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlan("plan.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "plan.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("a decoded plan does not encode: %v", err)
		}
		if _, err := ParsePlan("plan.json", again); err != nil {
			t.Fatalf("a decoded plan does not decode again: %v\n%s", err, again)
		}
	})
}

func synthPlan(tb testing.TB) *Plan {
	tb.Helper()
	c := &Config{Kubelet: KubeletConfig{Hostname: "h"}}
	p, err := NewPlan(synth(seedSpec), c)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
