package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// JSONPathPrefix starts --output jsonpath=TEMPLATE, kubectl's form.
const JSONPathPrefix = "jsonpath="

// JSONPath is a parsed --output jsonpath=TEMPLATE, evaluated with
// kubectl's own code (client-go's util/jsonpath, which needs nothing
// beyond the standard library) and kubectl's defaults: a missing key
// prints nothing rather than failing, as kubectl's
// --allow-missing-template-keys=true.
type JSONPath struct {
	template string
	jp       *jsonpath.JSONPath
}

// ParseJSONPath parses template; an error names the template and the
// column (1-based) of the action that does not parse.
func ParseJSONPath(template string) (*JSONPath, error) {
	jp := jsonpath.New("output").AllowMissingKeys(true)
	if err := jp.Parse(template); err != nil {
		return nil, fmt.Errorf("--output jsonpath=%s: at column %d: %w", template, failingAction(template), err)
	}
	return &JSONPath{template: template, jp: jp}, nil
}

// failingAction is the column of the first action {…} of template
// whose template up to its end does not parse, or of an action never
// closed; 1 when none is found (the error is then the template's as a
// whole).
func failingAction(template string) int {
	for _, a := range actions(template) {
		if a.end < 0 {
			return a.start + 1
		}
		if err := jsonpath.New("").Parse(template[:a.end]); err != nil {
			return a.start + 1
		}
	}
	return 1
}

// action is where one {…} of a template starts and ends (just after
// its '}'; -1 when it is never closed).
type action struct{ start, end int }

// actions finds the template's actions as client-go's parser does: an
// action runs from '{' to the next '}' outside a quoted string.
func actions(template string) []action {
	var out []action
	for i := 0; i < len(template); i++ {
		if template[i] != '{' {
			continue
		}
		a := action{start: i, end: -1}
		var quote byte
		for j := i + 1; j < len(template); j++ {
			c := template[j]
			switch {
			case quote != 0 && c == '\\':
				j++
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'':
				quote = c
			case c == '}':
				a.end = j + 1
			}
			if a.end >= 0 {
				break
			}
		}
		out = append(out, a)
		if a.end < 0 {
			break
		}
		i = a.end - 1
	}
	return out
}

// Execute writes the template evaluated on the object --output json
// prints of v (kind's envelope included), so that the JSON field names
// are the template's paths, as with kubectl.
func (p *JSONPath) Execute(w io.Writer, kind string, v any) error {
	raw, err := JSON(kind, v)
	if err != nil {
		return fmt.Errorf("--output jsonpath=%s: %w", p.template, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	// Numbers as kubectl's unstructured objects hold them: integers
	// whole (a uint64 byte count would lose digits as a float64), the
	// rest float64.
	dec.UseNumber()
	var obj any
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("--output jsonpath=%s: %w", p.template, err)
	}
	var b bytes.Buffer
	if err := p.jp.Execute(&b, numbers(obj)); err != nil {
		return fmt.Errorf("--output jsonpath=%s: %w", p.template, err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// numbers replaces the json.Numbers of a decoded document by int64,
// uint64 or float64, which jsonpath's filters compare as numbers.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		var u uint64
		if _, err := fmt.Sscan(x.String(), &u); err == nil && !strings.ContainsAny(x.String(), ".eE") {
			return u
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
	}
	return v
}
