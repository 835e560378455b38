package config

import (
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// The key checks of Parse look up each key of the file in the struct
// fields of Config. They run once per key of a file that may hold 170,000
// keys, so the fields of each struct type are read by reflection once and
// kept: reflect.VisibleFields per key made 174,000 unknown keys take 48 s
// and 601 MB (#38 item 6).

// tableKeys are the keys of one struct type as the decoder reads them:
// its tagged fields and those of the structs it embeds
// (KubeletOverrides), which are keys of its own table.
type tableKeys struct {
	byTag   map[string]reflect.StructField
	byLower map[string]string // lower-cased tag → tag
	list    string            // the tags, sorted and comma-separated
}

var tableKeysOf sync.Map // reflect.Type → *tableKeys

func keysOf(t reflect.Type) *tableKeys {
	if k, ok := tableKeysOf.Load(t); ok {
		return k.(*tableKeys)
	}
	k := &tableKeys{byTag: map[string]reflect.StructField{}, byLower: map[string]string{}}
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("toml")
		if tag == "" || tag == "-" {
			continue
		}
		k.byTag[tag] = f
		k.byLower[strings.ToLower(tag)] = tag
		names = append(names, tag)
	}
	sort.Strings(names)
	k.list = strings.Join(names, ", ")
	stored, _ := tableKeysOf.LoadOrStore(t, k)
	return stored.(*tableKeys)
}

// table is the struct type whose keys a value of type t holds, stepping
// into lists and pointers; false when its keys are data (a map) or it
// takes a value, not a table (NodeList, a string).
func table(t reflect.Type) (reflect.Type, bool) {
	for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, t.Kind() == reflect.Struct && t != reflect.TypeOf(NodeList{})
}

// fieldType is the Go type of Config's field at key k (array-of-tables
// elements stepped into), false when k names none.
func fieldType(k toml.Key) (reflect.Type, bool) {
	t := reflect.TypeOf(Config{})
	for _, part := range k {
		st, _ := table(t)
		if st.Kind() != reflect.Struct {
			return nil, false
		}
		f, ok := keysOf(st).byTag[part]
		if !ok {
			return nil, false
		}
		t = f.Type
	}
	return t, true
}

// allowedKeys lists the keys the config accepts next to an unknown key,
// read from the struct tags so that the list never goes stale.
func allowedKeys(k toml.Key) string {
	t, ok := fieldType(k[:len(k)-1])
	if !ok {
		return "(none)"
	}
	st, ok := table(t)
	if !ok {
		return "(none: this key takes a value, not a table)"
	}
	return keysOf(st).list
}

// miscased returns key k spelled as declared when one of its parts names
// a field only with another case, which BurntSushi's decoder accepts.
// Keys inside maps (labels) are data and keep their case.
func miscased(k toml.Key) (string, bool) {
	t := reflect.TypeOf(Config{})
	want := make([]string, len(k))
	found := false
	for i, part := range k {
		st, ok := table(t)
		if !ok {
			copy(want[i:], k[i:])
			break
		}
		keys := keysOf(st)
		f, ok := keys.byTag[part]
		if !ok {
			tag, ok := keys.byLower[strings.ToLower(part)]
			if !ok {
				return "", false // unknown in any case: reported as undecoded
			}
			f, part, found = keys.byTag[tag], tag, true
		}
		want[i] = part
		t = f.Type
	}
	return toml.Key(want).String(), found
}

// maxUnknownKeys is how many unknown keys Parse reports one by one. A
// file of 174,000 of them is a mistake or an attack, and the first ones
// with the keys allowed there say what to fix; the rest are counted.
const maxUnknownKeys = 20

// reportUnknownKeys adds the first maxUnknownKeys distinct unknown keys
// in file order, each with the keys allowed in its table, and how many
// more there are at the next one. Each key's line is a lookup in the
// source's index, so the cost is linear in the number of keys.
func reportUnknownKeys(col *Collector, src *source, undecoded []toml.Key) {
	type unknown struct {
		key  toml.Key
		name string
		line int
	}
	seen := make(map[string]bool, len(undecoded))
	keys := make([]unknown, 0, len(undecoded))
	for _, k := range undecoded {
		// toml lists a key of an array of tables once per entry
		// ("partition.lables"); it is one mistake.
		if name := k.String(); !seen[name] {
			seen[name] = true
			keys = append(keys, unknown{k, name, src.line(name)})
		}
	}
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].line < keys[j].line })
	for i, k := range keys {
		if i == maxUnknownKeys {
			col.Add(k.name, "unknown key, and %d more unknown keys after it, not listed (fix the ones above and run again)", len(keys)-i-1)
			return
		}
		col.Add(k.name, "unknown key; allowed here: %s", Whole(allowedKeys(k.key)))
	}
}
