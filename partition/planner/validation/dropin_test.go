package validation

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// problems renders DropInProblems as "field: msg" lines, warnings marked.
func problems(settings map[string]any) []string {
	var out []string
	for _, p := range DropInProblems(settings) {
		line := p.Field + ": " + p.Msg
		if p.Warning {
			line = "warning " + line
		}
		out = append(out, line)
	}
	return out
}

func TestDropInProblems(t *testing.T) {
	for _, tt := range []struct {
		name     string
		settings map[string]any
		want     []string // substrings, one per problem, in order
	}{
		{"the user's fields", map[string]any{
			"serializeImagePulls": false, "containerLogMaxSize": "50Mi", "featureGates": map[string]any{"SomeGate": true},
			"authentication": map[string]any{"webhook": map[string]any{"cacheTTL": "30s"}},
		}, nil},
		{"a managed field", map[string]any{"cpuManagerPolicy": "none"},
			[]string{"cpuManagerPolicy: sets cpuManagerPolicy, which numa-partition sets for each partition (set kubelet.cpu_manager_policy instead"}},
		{"a managed field in another case", map[string]any{"CPUManagerPolicy": "none"},
			[]string{"CPUManagerPolicy: sets cpuManagerPolicy"}},
		{"a managed field the tool decides alone", map[string]any{"cgroupRoot": "/"},
			[]string{"cgroupRoot: sets cgroupRoot, which numa-partition sets for each partition (numa-partition decides it"}},
		{"a managed field in a table", map[string]any{"authentication": map[string]any{"x509": map[string]any{"clientCAFile": "/x"}, "anonymous": map[string]any{"enabled": true}}},
			[]string{"authentication.anonymous.enabled: sets", "authentication.x509.clientCAFile: sets"}},
		{"a table of managed fields that is no table", map[string]any{"authorization": "x"},
			[]string{"authorization: must be a table: it holds authorization.mode"}},
		{"the kind the tool writes", map[string]any{"kind": "KubeletConfiguration"}, []string{"kind: sets kind"}},
		{"a denied field", map[string]any{"registerNode": false}, []string{"registerNode: sets registerNode, which no partition's kubelet may have"}},
		{"a known field in another case", map[string]any{"SerializeImagePulls": false}, []string{`write "serializeImagePulls"`}},
		{"an unknown field", map[string]any{"someFieldOf138": 1}, []string{"warning someFieldOf138: is not a field"}},
		{"an unknown field inside a known one", map[string]any{"logging": map[string]any{"nosuch": 1}}, []string{"warning logging.nosuch: is not a field"}},
		{"a value of the wrong type", map[string]any{"imageGCHighThresholdPercent": "80"}, []string{"imageGCHighThresholdPercent: kubelet could not read it and would not start: cannot unmarshal string"}},
	} {
		got := problems(tt.settings)
		if assert.Len(t, got, len(tt.want), "%s: %q", tt.name, got) {
			for i, w := range tt.want {
				assert.Contains(t, got[i], w, tt.name)
			}
		}
	}
}

// Every managed and denied field is one kubelet has: a misspelt entry
// would refuse nothing.
func TestManagedFieldsAreKubeletFields(t *testing.T) {
	typ := reflect.TypeOf(kubeletv1beta1.KubeletConfiguration{})
	for _, field := range append(ManagedFields(), DeniedFields()...) {
		if field == "apiVersion" || field == "kind" {
			continue
		}
		tp := typ
		for _, part := range strings.Split(field, ".") {
			f, ok := jsonField(tp, part)
			if !assert.True(t, ok, "%s: no field %q", field, part) {
				break
			}
			tp = f.Type
		}
	}
}

func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, f := range reflect.VisibleFields(t) {
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
