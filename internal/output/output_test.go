package output

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	Name string `json:"name"`
}

type sample struct {
	Zeta   string            `json:"zeta"`
	Alpha  int               `json:"alpha,omitempty"`
	Items  []inner           `json:"items"`
	Labels map[string]string `json:"labels"`
	At     time.Time         `json:"at,omitzero"`
	Size   uint64            `json:"size,string"`
	Skip   string            `json:"-"`
	//lint:ignore U1000 an unexported field, which Schema must skip
	hidden string
}

type embedding struct {
	*sample
	Extra bool `json:"extra"`
	Zeta  int  `json:"zeta"` // hides sample's
}

func TestJSONPutsTypeMetaFirstAndKeepsTheOrder(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, "Sample", sample{Zeta: "z", Alpha: 1}))
	assert.Equal(t, `{
  "apiVersion": "numa-partition.io/v1alpha1",
  "kind": "Sample",
  "zeta": "z",
  "alpha": 1,
  "items": null,
  "labels": null,
  "size": "0"
}
`, b.String())

	b.Reset()
	require.NoError(t, WriteYAML(&b, "Sample", sample{Zeta: "z", Alpha: 1}))
	assert.Equal(t, "apiVersion: numa-partition.io/v1alpha1\nkind: Sample\nalpha: 1\nitems: null\nlabels: null\nsize: \"0\"\nzeta: z\n", b.String())

	b.Reset()
	require.NoError(t, WriteJSON(&b, "Empty", struct{}{}))
	assert.Equal(t, "{\n  \"apiVersion\": \"numa-partition.io/v1alpha1\",\n  \"kind\": \"Empty\"\n}\n", b.String())
	b.Reset()
	require.NoError(t, WriteYAML(&b, "Empty", struct{}{}))
	assert.Equal(t, "apiVersion: numa-partition.io/v1alpha1\nkind: Empty\n", b.String())
}

func TestJSONRefusesWhatItCannotWrap(t *testing.T) {
	_, err := JSON("List", []int{1})
	assert.ErrorContains(t, err, "does not encode as a JSON object")
	_, err = JSON("Pod", struct {
		Kind string `json:"kind"`
	}{"Pod"})
	assert.ErrorContains(t, err, `has its own "kind" field`)
	_, err = JSON("", struct{}{})
	assert.ErrorContains(t, err, "no kind")
}

func TestCheck(t *testing.T) {
	assert.NoError(t, Check("f", "Plan", TypeMeta{}))
	assert.NoError(t, Check("f", "Plan", TypeMeta{APIVersion, "Plan"}))
	assert.EqualError(t, Check("f", "Plan", TypeMeta{APIVersion, "Status"}), `f: kind "Status": want kind Plan`)
	assert.EqualError(t, Check("f", "Plan", TypeMeta{"v1", "Plan"}), `f: apiVersion "v1": this build reads numa-partition.io/v1alpha1`)
	assert.ErrorContains(t, Check("f", "Plan", TypeMeta{Kind: "Plan"}), "f: apiVersion missing")
	assert.ErrorContains(t, Check("f", "Plan", TypeMeta{APIVersion: APIVersion}), "f: kind missing")
}

func TestSchema(t *testing.T) {
	got := map[string]Field{}
	var order []string
	for _, f := range Schema(reflect.TypeFor[embedding]()) {
		got[f.Path] = f
		order = append(order, f.Path)
	}
	assert.Equal(t, []string{"alpha", "items", "items[].name", "labels", "at", "size", "extra", "zeta"}, order)
	assert.Equal(t, Field{Path: "alpha", Type: "integer", GoType: "int", Optional: true}, got["alpha"])
	assert.Equal(t, "string", got["at"].Type, "time.Time writes a string")
	assert.True(t, got["at"].Optional)
	assert.Equal(t, "string", got["size"].Type, ",string")
	assert.Equal(t, "integer", got["zeta"].Type, "the shallower zeta")
	assert.Equal(t, "array", got["items"].Type)
	assert.Equal(t, "object", got["labels"].Type)
}
