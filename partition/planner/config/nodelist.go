package config

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/numa-partition/numa-partition/internal/echo"
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
			return fmt.Errorf("node list %q: %w", echo.Value(v), err)
		}
		s = parsed
	case []any:
		for _, e := range v {
			id, ok := e.(int64)
			if !ok || id < 0 || id >= bitmask.MaxNodes {
				return fmt.Errorf("node list: %v is not a node id (allowed: integers 0-%d, or a string like \"0-3,8\")", echo.Value(fmt.Sprint(e)), bitmask.MaxNodes-1)
			}
			s = s.Add(int(id))
		}
	default:
		return fmt.Errorf("node list: %v is neither an array of node ids nor a string like \"0-3,8\"", echo.Value(fmt.Sprint(v)))
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
