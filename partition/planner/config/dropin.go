package config

import (
	"reflect"

	"github.com/BurntSushi/toml"
)

// withoutUserTableKeys drops from undecoded the keys inside a table of any keys
// (kubelet.drop_in, partition[].drop_in): they are the user's data, which
// the planner checks field by field, and the decoder reports them as
// undecoded once they nest although it decoded them into the map.
func withoutUserTableKeys(undecoded []toml.Key) []toml.Key {
	out := undecoded[:0:0]
	for _, k := range undecoded {
		if !inUserTable(k) {
			out = append(out, k)
		}
	}
	return out
}

func inUserTable(k toml.Key) bool {
	for i := 1; i < len(k); i++ {
		if t, ok := fieldType(k[:i]); ok && t == reflect.TypeOf(map[string]any{}) {
			return true
		}
	}
	return false
}
