// Package output is the envelope of every object numa-partition prints
// with --output json or yaml: apiVersion and kind first, then the
// object's own fields unchanged, the way kubectl prints Kubernetes
// objects. A program reading the output (or a plan file written by plan
// -o json) can then tell what it holds and which schema it follows.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// APIVersion is the schema version of every printed object. The v1alpha1
// schemas may still change; a change that breaks a reader gets a new
// version.
const APIVersion = "numa-partition.io/v1alpha1"

// TypeMeta is the two fields every printed object starts with.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// Fields are the names of TypeMeta's fields, reserved in every object.
var Fields = []string{"apiVersion", "kind"}

// JSON returns v, which must encode as a JSON object, as that object with
// apiVersion and kind added first, the other fields in v's order. An
// object that already has an apiVersion or kind field is refused: the
// envelope's would hide it.
func JSON(kind string, v any) ([]byte, error) {
	if kind == "" {
		return nil, fmt.Errorf("output: no kind for %T", v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return nil, fmt.Errorf("output: kind %s: %T does not encode as a JSON object (a list is an object with items)", kind, v)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	for _, f := range Fields {
		if _, ok := fields[f]; ok {
			return nil, fmt.Errorf("output: kind %s: %T has its own %q field, which the envelope's would hide", kind, v, f)
		}
	}
	head, err := json.Marshal(TypeMeta{APIVersion: APIVersion, Kind: kind})
	if err != nil {
		return nil, err
	}
	body := bytes.TrimSpace(raw[1 : len(raw)-1])
	if len(body) == 0 {
		return head, nil
	}
	out := append(head[:len(head)-1:len(head)-1], ',')
	out = append(out, body...)
	return append(out, '}'), nil
}

// WriteJSON writes v with its envelope as indented JSON with a trailing
// newline, its fields in v's order.
func WriteJSON(w io.Writer, kind string, v any) error {
	raw, err := JSON(kind, v)
	if err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	b.WriteByte('\n')
	_, err = w.Write(b.Bytes())
	return err
}

// WriteYAML writes the same document as YAML: apiVersion and kind first,
// then v's keys as in its JSON, sorted.
func WriteYAML(w io.Writer, kind string, v any) error {
	raw, err := JSON(kind, v)
	if err != nil {
		return fmt.Errorf("writing YAML: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("writing YAML: %w", err)
	}
	head, err := yaml.Marshal(TypeMeta{APIVersion: APIVersion, Kind: kind})
	if err != nil {
		return fmt.Errorf("writing YAML: %w", err)
	}
	// sigs.k8s.io/yaml sorts keys, and apiVersion would land among
	// them: the two are written first, the rest after them.
	for _, f := range Fields {
		delete(fields, f)
	}
	out := head
	if len(fields) > 0 {
		rest, err := json.Marshal(fields)
		if err != nil {
			return fmt.Errorf("writing YAML: %w", err)
		}
		body, err := yaml.JSONToYAML(rest)
		if err != nil {
			return fmt.Errorf("writing YAML: %w", err)
		}
		out = append(out, body...)
	}
	_, err = w.Write(out)
	return err
}

// Write writes v with its envelope in format: "yaml", "jsonpath=TEMPLATE"
// (the template evaluated on the JSON), else JSON.
func Write(w io.Writer, format, kind string, v any) error {
	if template, ok := strings.CutPrefix(format, JSONPathPrefix); ok {
		p, err := ParseJSONPath(template)
		if err != nil {
			return err
		}
		return p.Execute(w, kind, v)
	}
	if format == "yaml" {
		return WriteYAML(w, kind, v)
	}
	return WriteJSON(w, kind, v)
}

// Check is the reader's side: the apiVersion and kind found in file, a
// document that should be of kind want. Both absent is accepted (files
// written before objects carried them); a wrong value, or one without
// the other, is refused naming the file and the field.
func Check(file, want string, got TypeMeta) error {
	switch {
	case got.APIVersion == "" && got.Kind == "":
		return nil
	case got.APIVersion == "":
		return fmt.Errorf("%s: apiVersion missing beside kind %q: want apiVersion %s", file, got.Kind, APIVersion)
	case got.APIVersion != APIVersion:
		return fmt.Errorf("%s: apiVersion %q: this build reads %s", file, got.APIVersion, APIVersion)
	case got.Kind == "":
		return fmt.Errorf("%s: kind missing beside apiVersion %s: want kind %s", file, got.APIVersion, want)
	case got.Kind != want:
		return fmt.Errorf("%s: kind %q: want kind %s", file, got.Kind, want)
	}
	return nil
}
