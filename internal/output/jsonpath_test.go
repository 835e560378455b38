package output

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type jpItem struct {
	Name  string `json:"name"`
	Bytes uint64 `json:"bytes"`
}

type jpList struct {
	Items []jpItem `json:"items"`
}

func TestJSONPathEvaluatesTheJSONObject(t *testing.T) {
	v := jpList{Items: []jpItem{{"node0", 18446744073709551615}, {"node1", 2}}}
	for template, want := range map[string]string{
		"{.kind}":           "L",
		"{.apiVersion}":     APIVersion,
		"{.items[*].name}":  "node0 node1",
		"{.items[0].bytes}": "18446744073709551615",
		`{range .items[*]}{.name}={.bytes}{"\n"}{end}`: "node0=18446744073709551615\nnode1=2\n",
		"{.items[?(@.bytes<3)].name}":                  "node1",
		"{.nosuch}":                                    "",
		"names: {.items[1].name}":                      "names: node1",
	} {
		var b bytes.Buffer
		require.NoError(t, Write(&b, JSONPathPrefix+template, "L", v), template)
		assert.Equal(t, want, b.String(), template)
	}
}

func TestJSONPathErrorsNameTheTemplateAndColumn(t *testing.T) {
	for template, want := range map[string]string{
		"{.items[}":            "--output jsonpath={.items[}: at column 1: ",
		"x {.a} {.b[?(@.c}":    "--output jsonpath=x {.a} {.b[?(@.c}: at column 8: ",
		"{.a} {.b":             "--output jsonpath={.a} {.b: at column 6: unclosed action",
		"{.a} {.b['}']} {.c[}": "--output jsonpath={.a} {.b['}']} {.c[}: at column 16: ",
	} {
		_, err := ParseJSONPath(template)
		require.Error(t, err, template)
		assert.Contains(t, err.Error(), want, template)
	}
	var b bytes.Buffer
	err := Write(&b, JSONPathPrefix+"{.items[5]}", "L", jpList{Items: []jpItem{{"a", 1}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--output jsonpath={.items[5]}: array index out of bounds")
}

// FuzzJSONPath: no template, however odd, panics; one that does not
// parse is refused naming itself and a column inside it.
func FuzzJSONPath(f *testing.F) {
	for _, s := range []string{"{.a}", "{range .items[*]}{.name}{end}", "{.a['}']}", "{", "}{", `{"\n"}`, "{.items[?(@.x==1)]}"} {
		f.Add(s)
	}
	v := jpList{Items: []jpItem{{"a", 1}}}
	f.Fuzz(func(t *testing.T, template string) {
		p, err := ParseJSONPath(template)
		if err != nil {
			col := failingAction(template)
			if col < 1 || col > len(template)+1 {
				t.Fatalf("%q: column %d outside the template", template, col)
			}
			return
		}
		var b bytes.Buffer
		_ = p.Execute(&b, "L", v)
	})
}
