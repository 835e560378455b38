package planner

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/partition/planner/config"
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

// Issue 26: plan -o json and -o yaml write apiVersion and kind first;
// ParsePlan reads both back, accepts a plan without them (written before,
// or the rendered plan.json), and refuses another apiVersion or kind, or
// one without the other, naming the file and the field.
func TestParsePlanTypeMeta_Issue26(t *testing.T) {
	plan := mustPlan(t, seedSpec, "")
	var js, ys bytes.Buffer
	require.NoError(t, output.WriteJSON(&js, PlanKind, plan))
	require.NoError(t, output.WriteYAML(&ys, PlanKind, plan))
	require.True(t, strings.HasPrefix(js.String(), "{\n  \"apiVersion\": \""+output.APIVersion+"\",\n  \"kind\": \"Plan\",\n"), js.String()[:80])
	require.True(t, strings.HasPrefix(ys.String(), "apiVersion: "+output.APIVersion+"\nkind: Plan\n"), ys.String()[:80])
	for name, data := range map[string][]byte{"plan.json": js.Bytes(), "plan.yaml": ys.Bytes()} {
		got, err := ParsePlan(name, data)
		require.NoError(t, err, name)
		assert.Equal(t, plan, got, name)
	}
	bare, err := json.Marshal(plan)
	require.NoError(t, err)
	got, err := ParsePlan("old.json", bare)
	require.NoError(t, err, "a plan without apiVersion and kind is read")
	assert.Equal(t, plan, got)

	for name, c := range map[string]struct{ from, to, want string }{
		"wrong kind":        {`"kind": "Plan"`, `"kind": "Topology"`, `plan.json: kind "Topology": want kind Plan`},
		"wrong apiVersion":  {`"apiVersion": "numa-partition.io/v1alpha1"`, `"apiVersion": "numa-partition.io/v2"`, `plan.json: apiVersion "numa-partition.io/v2": this build reads numa-partition.io/v1alpha1`},
		"kind only":         {`"apiVersion": "numa-partition.io/v1alpha1",`, ``, `plan.json: apiVersion missing beside kind "Plan"`},
		"apiVersion only":   {`"kind": "Plan",`, ``, `plan.json: kind missing beside apiVersion numa-partition.io/v1alpha1: want kind Plan`},
		"kind in lowercase": {`"kind": "Plan"`, `"kind": "plan"`, `plan.json: kind "plan": want kind Plan`},
	} {
		t.Run(name, func(t *testing.T) {
			edited := strings.Replace(js.String(), c.from, c.to, 1)
			require.NotEqual(t, js.String(), edited, "the edit applies")
			_, err := ParsePlan("plan.json", []byte(edited))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	edited := strings.Replace(ys.String(), "kind: Plan\n", "kind: Status\n", 1)
	require.NotEqual(t, ys.String(), edited)
	_, err = ParsePlan("plan.yaml", []byte(edited))
	assert.ErrorContains(t, err, `plan.yaml: kind "Status": want kind Plan`)
	edited = strings.Replace(ys.String(), "kind: Plan\n", "kind: Plan\nkind: Plan\n", 1)
	_, err = ParsePlan("plan.yaml", []byte(edited))
	assert.ErrorContains(t, err, "plan.yaml: not a plan (plan -o json or -o yaml): ")
	for _, empty := range []string{"# nothing\n", "---\n"} {
		_, err = ParsePlan("plan.yaml", []byte(empty))
		assert.ErrorContains(t, err, "plan.yaml: not a plan", "%q", empty)
	}
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
	if env, err := output.JSON(PlanKind, plan); err == nil {
		f.Add(env)
	}
	f.Add([]byte("apiVersion: v1\nkind: Plan\nhostname: h\n"))
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
	c := &config.Config{Kubelet: config.KubeletConfig{Hostname: "h"}}
	p, err := NewPlan(synth(seedSpec), c)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Issue 27: taints were strings in the plan, parsed again (more loosely)
// by kubeletgen. They are Taints now, parsed once from the config, and a
// plan file's taint is read with the same parser: one the planner would
// refuse in a config is refused naming the file and the rule.
func TestTaintsInAPlanFile(t *testing.T) {
	c := &config.Config{Kubelet: config.KubeletConfig{Hostname: "h", Taints: []string{"dedicated=hpc:NoSchedule", "gpu:NoExecute"}}}
	plan, err := NewPlan(synth(seedSpec), c)
	require.NoError(t, err)
	want := []Taint{{"dedicated", "hpc", "NoSchedule"}, {"gpu", "", "NoExecute"}}
	assert.Equal(t, want, plan.Partitions[0].Taints)
	data, err := json.Marshal(plan)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"taints":["dedicated=hpc:NoSchedule","gpu:NoExecute"]`, "the JSON form is kubelet's --register-with-taints")
	got, err := ParsePlan("plan.json", data)
	require.NoError(t, err)
	assert.Equal(t, want, got.Partitions[0].Taints)

	for bad, msg := range map[string]string{
		"novalue":            "has no effect",
		"k=v:Sometimes":      `effect "Sometimes" is not`,
		"=v:NoSchedule":      "key:",
		"bad key:NoSchedule": "key:",
		"x=a b:NoSchedule":   "value:",
		"numa-partition.io/partition=x:NoSchedule": "numa-partition",
	} {
		edited := strings.Replace(string(data), `"gpu:NoExecute"`, strconvQuote(bad), 1)
		_, err := ParsePlan("plan.json", []byte(edited))
		if assert.Error(t, err, bad) {
			assert.Contains(t, err.Error(), "plan.json", bad)
			assert.Contains(t, err.Error(), msg, bad)
		}
	}
	_, err = ParsePlan("plan.json", []byte(strings.Replace(string(data), `"gpu:NoExecute"`, `{"Key":"gpu"}`, 1)))
	assert.ErrorContains(t, err, "a taint is a string key[=value]:Effect")
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
