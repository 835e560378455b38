package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// NodeList is a set of NUMA node ids written either as an array of ids
// ([0, 1]) or as a kernel list string ("0-3,8"). Set reports whether the
// key was present at all, so that an explicit empty list can differ from
// an absent one.
type NodeList struct {
	Nodes bitmask.NodeSet
	Set   bool
}

// Nodes is a NodeList literal for code and tests.
func Nodes(ids ...int) NodeList { return NodeList{Nodes: bitmask.NewNodeSet(ids...), Set: true} }

// UnmarshalTOML implements toml.Unmarshaler.
func (l *NodeList) UnmarshalTOML(v any) error {
	var s bitmask.NodeSet
	switch v := v.(type) {
	case string:
		parsed, err := bitmask.ParseNodeList(v)
		if err != nil {
			return fmt.Errorf("node list %q: %w", v, err)
		}
		s = parsed
	case []any:
		for _, e := range v {
			id, ok := e.(int64)
			if !ok || id < 0 || id >= bitmask.MaxNodes {
				return fmt.Errorf("node list: %v is not a node id (allowed: integers 0-%d, or a string like \"0-3,8\")", e, bitmask.MaxNodes-1)
			}
			s = s.Add(int(id))
		}
	default:
		return fmt.Errorf("node list: %v is neither an array of node ids nor a string like \"0-3,8\"", v)
	}
	*l = NodeList{Nodes: s, Set: true}
	return nil
}

// MarshalTOML writes the array form.
func (l NodeList) MarshalTOML() ([]byte, error) {
	ids := l.Nodes.IDs()
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return []byte("[" + strings.Join(parts, ", ") + "]"), nil
}

var _ toml.Unmarshaler = (*NodeList)(nil)

// allowedKeys lists the keys the config accepts next to an unknown key,
// read from the struct tags so that the list never goes stale.
// fieldType is the Go type of Config's field at key k (array-of-tables
// elements stepped into), false when k names none.
func fieldType(k toml.Key) (reflect.Type, bool) {
	t := reflect.TypeOf(Config{})
	for _, part := range k {
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil, false
		}
		f, ok := fieldByTag(t, part)
		if !ok {
			return nil, false
		}
		t = f.Type
	}
	return t, true
}

func allowedKeys(k toml.Key) string {
	t, ok := fieldType(k[:len(k)-1])
	if !ok {
		return "(none)"
	}
	for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeOf(NodeList{}) {
		return "(none: this key takes a value, not a table)"
	}
	var names []string
	for _, f := range tomlFields(t) {
		names = append(names, f.Tag.Get("toml"))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// miscased returns key k spelled as declared when one of its parts names
// a field only with another case, which BurntSushi's decoder accepts.
// Keys inside maps (labels) are data and keep their case.
func miscased(k toml.Key) (string, bool) {
	t := reflect.TypeOf(Config{})
	want := make([]string, len(k))
	found := false
	for i, part := range k {
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t == reflect.TypeOf(NodeList{}) {
			copy(want[i:], k[i:])
			break
		}
		f, ok := fieldByTag(t, part)
		if !ok {
			for _, g := range tomlFields(t) {
				if tag := g.Tag.Get("toml"); strings.EqualFold(tag, part) {
					f, ok = g, true
					part, found = tag, true
					break
				}
			}
		}
		if !ok {
			return "", false // unknown in any case: reported as undecoded
		}
		want[i] = part
		t = f.Type
	}
	return toml.Key(want).String(), found
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for _, f := range tomlFields(t) {
		if f.Tag.Get("toml") == tag {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// tomlFields are the keys of struct type t as the decoder reads them:
// its tagged fields and those of the structs it embeds
// (KubeletOverrides), which are keys of t's own table.
func tomlFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if tag := f.Tag.Get("toml"); tag != "" && tag != "-" {
			out = append(out, f)
		}
	}
	return out
}
