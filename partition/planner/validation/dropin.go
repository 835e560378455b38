package validation

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	sjson "sigs.k8s.io/json"
)

// A KubeletConfiguration drop-in is a table of KubeletConfiguration
// fields of the user's, which render writes into the partition's
// --config-dir; kubelet merges it over the rendered file (a JSON merge
// patch: tables merge, values and lists replace). These are its rules;
// the fields it may not set are kubeletSettings'.

// DropInProblem is one problem of a drop-in, at a field ("featureGates",
// "authentication.x509.clientCAFile"). A Warning does not stop the plan.
type DropInProblem struct {
	Field   string
	Msg     string
	Warning bool
}

// DropInProblems says what is wrong with a drop-in's fields, in field
// order: a field the tool manages or denies, in any case (kubelet decodes
// the merged configuration with encoding/json, which matches names in any
// case), a known field in another case (kubelet's merge keeps both
// spellings and which one wins depends on their order), a value kubelet
// could not decode (it would not start). A field the KubeletConfiguration
// types of this build do not know is only a warning: a newer kubelet may
// know it, and kubelet ignores one it does not.
func DropInProblems(settings map[string]any) []DropInProblem {
	var out []DropInProblem
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		value := settings[name]
		if p, ok := deniedProblem(name); ok {
			out = append(out, p)
			continue
		}
		if ps := managedProblems(name, value); len(ps) > 0 {
			out = append(out, ps...)
			continue
		}
		known, exact := knownField(name)
		switch {
		case known != "" && !exact:
			out = append(out, DropInProblem{Field: name, Msg: fmt.Sprintf("KubeletConfiguration fields are case-sensitive: write %q", known)})
		case known == "":
			out = append(out, DropInProblem{Field: name, Warning: true, Msg: unknownField})
		default:
			out = append(out, decodeProblems(name, value)...)
		}
	}
	return out
}

// unknownField is the warning for a field the KubeletConfiguration types
// of this build (k8s.io/kubelet in go.mod) do not know.
const unknownField = "is not a field of kubelet 1.37's KubeletConfiguration, which this build knows: kubelet ignores a field it does not know (a newer one may know it)"

// deniedProblem refuses a denied field, in any case.
func deniedProblem(name string) (DropInProblem, bool) {
	for _, field := range DeniedFields() {
		if strings.EqualFold(name, field) {
			return DropInProblem{Field: name, Msg: fmt.Sprintf("sets %s, which no partition's kubelet may have: %s", field, deniedFields[field])}, true
		}
	}
	return DropInProblem{}, false
}

// managedProblems refuses the managed fields at path or inside it,
// matching names in any case: a table that holds managed fields
// (authentication) is looked into, and refused when it is not a table
// (in a plan file, a null would make kubelet's merge delete them).
func managedProblems(path string, value any) []DropInProblem {
	var holds []string
	for _, field := range ManagedFields() {
		if strings.EqualFold(path, field) {
			use := "numa-partition decides it"
			if key := managedFields[field]; key != "" {
				use = "set " + key + " instead"
			}
			return []DropInProblem{{Field: path, Msg: fmt.Sprintf("sets %s, which numa-partition sets for each partition (%s; the managed fields are listed under kubelet.drop_in in docs/config-reference.md)", field, use)}}
		}
		if len(field) > len(path) && strings.EqualFold(field[:len(path)+1], path+".") {
			holds = append(holds, field)
		}
	}
	if len(holds) == 0 {
		return nil
	}
	table, ok := value.(map[string]any)
	if !ok {
		return []DropInProblem{{Field: path, Msg: fmt.Sprintf("must be a table: it holds %s, which numa-partition sets for each partition", strings.Join(holds, ", "))}}
	}
	var out []DropInProblem
	for _, sub := range slices.Sorted(maps.Keys(table)) {
		out = append(out, managedProblems(path+"."+sub, table[sub])...)
	}
	return out
}

// kubeletFields are the JSON names of KubeletConfiguration's fields.
var kubeletFields = func() []string {
	var names []string
	for _, f := range reflect.VisibleFields(reflect.TypeOf(kubeletv1beta1.KubeletConfiguration{})) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}()

// knownField returns the field name spells, in its declared case, and
// whether name is that case.
func knownField(name string) (string, bool) {
	for _, f := range kubeletFields {
		if f == name {
			return f, true
		}
	}
	for _, f := range kubeletFields {
		if strings.EqualFold(f, name) {
			return f, false
		}
	}
	return "", false
}

// decodeProblems decodes one field as kubelet's types do: a value of
// the wrong type is an error, a field inside it they do not know a
// warning (as at the top level).
func decodeProblems(name string, value any) []DropInProblem {
	raw, err := json.Marshal(map[string]any{name: value})
	if err != nil {
		return []DropInProblem{{Field: name, Msg: fmt.Sprintf("is not a value KubeletConfiguration can hold: %v", err)}}
	}
	var c kubeletv1beta1.KubeletConfiguration
	strict, err := sjson.UnmarshalStrict(raw, &c)
	if err != nil {
		return []DropInProblem{{Field: name, Msg: "kubelet could not read it and would not start: " + strings.TrimPrefix(err.Error(), "json: ")}}
	}
	var out []DropInProblem
	for _, e := range strict {
		field := name
		var fe sjson.FieldError
		if errors.As(e, &fe) {
			field = fe.FieldPath()
		}
		out = append(out, DropInProblem{Field: field, Warning: true, Msg: unknownField})
	}
	return out
}
