package output

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
)

// Field is one field of an object's JSON schema, as encoding/json
// writes the Go type.
type Field struct {
	// Path is the field's place: partitions[].cpus, labels.*.
	Path string
	// Type is the JSON type: string, integer, number, boolean, object,
	// array, any.
	Type string
	// GoType is the Go type it is written from.
	GoType string
	// Optional: left out when empty (omitempty, omitzero).
	Optional bool
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// Schema lists the fields of t's JSON encoding, depth first in the
// order encoding/json writes them.
func Schema(t reflect.Type) []Field {
	var out []Field
	walk(&out, t, "", map[reflect.Type]bool{})
	return out
}

// walk adds the fields below a value of type t at path.
func walk(out *[]Field, t reflect.Type, path string, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if custom(t) || seen[t] {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		seen[t] = true
		defer delete(seen, t)
		for _, f := range fields(t) {
			p := join(path, f.name)
			*out = append(*out, Field{Path: p, Type: jsonType(f.typ, f.quoted), GoType: goType(f.typ), Optional: f.optional})
			walk(out, f.typ, p, seen)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return // base64
		}
		walk(out, t.Elem(), path+"[]", seen)
	case reflect.Map:
		p := join(path, "*")
		if elem := t.Elem(); jsonType(elem, false) == "object" || jsonType(elem, false) == "array" {
			*out = append(*out, Field{Path: p, Type: jsonType(elem, false), GoType: goType(elem)})
			walk(out, elem, p, seen)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

type structField struct {
	name     string
	typ      reflect.Type
	optional bool
	quoted   bool // ,string
	depth    int
}

// fields are t's JSON fields in encoding/json's order: exported, not
// "-", embedded structs without a name flattened into their parent; of
// a name found at several depths the shallowest wins.
func fields(t reflect.Type) []structField {
	var all []structField
	depth := map[string]int{}
	var add func(t reflect.Type, d int)
	add = func(t reflect.Type, d int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				et := f.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct && !custom(et) {
					add(et, d+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if old, ok := depth[name]; ok && old <= d {
				continue
			}
			depth[name] = d
			opts = "," + opts + ","
			all = append(all, structField{name: name, typ: f.Type,
				optional: strings.Contains(opts, ",omitempty,") || strings.Contains(opts, ",omitzero,"),
				quoted:   strings.Contains(opts, ",string,"), depth: d})
		}
	}
	add(t, 0)
	var out []structField
	for _, f := range all {
		if depth[f.name] == f.depth {
			out = append(out, f)
		}
	}
	return out
}

// custom says whether t (or *t) writes its own JSON.
func custom(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonMarshaler) || pt.Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || pt.Implements(textMarshaler)
}

// jsonType is the JSON type a value of t is written as.
func jsonType(t reflect.Type, quoted bool) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if custom(t) {
		// What it writes for its zero value says which type it is.
		raw, err := json.Marshal(reflect.New(t).Interface())
		if err != nil || len(raw) == 0 {
			return "any"
		}
		switch raw[0] {
		case '"':
			return "string"
		case '{':
			return "object"
		case '[':
			return "array"
		case 't', 'f':
			return "boolean"
		case 'n':
			return "any"
		}
		return "number"
	}
	if quoted {
		return "string"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return "string"
		}
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "any"
}

// goType names t as its package does: planner.Plan, []string.
func goType(t reflect.Type) string {
	return t.String()
}
