package bitmask

import (
	"encoding/json"
	"fmt"
	"math/bits"
)

// MaxNodes is the kernel's MAX_NUMNODES on x86_64 and arm64 (NODES_SHIFT=10).
const MaxNodes = 1024

const nodeWords = MaxNodes / 64

// NodeWords is the number of 64-bit words of a NodeSet (Words).
const NodeWords = nodeWords

// NodeSet is a set of NUMA node ids, a plain value: comparable with ==,
// usable as a map key, copied without allocation. The zero value is empty.
//
// Its order (Less) is the numeric order of the bit pattern, bit i = node i,
// which is what kubelet's bitmask.IsLessThan compares.
type NodeSet struct {
	w [nodeWords]uint64
}

// NewNodeSet returns the set of the given ids. It panics on ids outside
// 0..MaxNodes-1, which are programming errors; parse input instead.
func NewNodeSet(ids ...int) NodeSet {
	var s NodeSet
	for _, id := range ids {
		s = s.Add(id)
	}
	return s
}

// ParseNodeList parses the kernel list form ("0-1,4"; "" is the empty set).
func ParseNodeList(str string) (NodeSet, error) {
	var s NodeSet
	err := parseList(str, MaxNodes, func(lo, hi int) {
		for id := lo; id <= hi; id++ {
			s.w[id/64] |= 1 << (id % 64)
		}
	})
	return s, err
}

// ParseNodeMask parses the kernel hex mask form.
func ParseNodeMask(str string) (NodeSet, error) {
	var s NodeSet
	err := parseMask(str, MaxNodes, func(index int, word uint32) {
		s.w[index/2] |= uint64(word) << (32 * (index % 2))
	})
	return s, err
}

// MustParseNodeList is ParseNodeList for literals in code and tests.
func MustParseNodeList(str string) NodeSet {
	s, err := ParseNodeList(str)
	if err != nil {
		panic(err)
	}
	return s
}

// Add returns s ∪ {id}.
func (s NodeSet) Add(id int) NodeSet {
	if id < 0 || id >= MaxNodes {
		panic(fmt.Sprintf("bitmask: node id %d out of range", id))
	}
	s.w[id/64] |= 1 << (id % 64)
	return s
}

// Remove returns s \ {id}.
func (s NodeSet) Remove(id int) NodeSet {
	if id >= 0 && id < MaxNodes {
		s.w[id/64] &^= 1 << (id % 64)
	}
	return s
}

// Has reports whether id is in the set.
func (s NodeSet) Has(id int) bool {
	return id >= 0 && id < MaxNodes && s.w[id/64]&(1<<(id%64)) != 0
}

// Len is the number of nodes in the set.
func (s NodeSet) Len() int {
	n := 0
	for _, w := range s.w {
		n += bits.OnesCount64(w)
	}
	return n
}

// Word returns nodes 64*i .. 64*i+63 as a bit pattern (bit j = node
// 64*i+j), 0 outside the set's range; for callers packing small sets
// into machine words.
func (s NodeSet) Word(i int) uint64 {
	if i < 0 || i >= nodeWords {
		return 0
	}
	return s.w[i]
}

// Words is the set's words in place (bit j of word i is node 64i+j, as
// Word says), read and written without a copy: every method of a NodeSet
// takes it by value, and the compiler copies its 128 bytes at each call,
// inlined or not. For the merge's hot loops.
func (s *NodeSet) Words() *[nodeWords]uint64 { return &s.w }

// IsEmpty reports whether the set has no node.
func (s NodeSet) IsEmpty() bool { return s == NodeSet{} }

// Union returns s ∪ o.
func (s NodeSet) Union(o NodeSet) NodeSet {
	for i := range s.w {
		s.w[i] |= o.w[i]
	}
	return s
}

// Intersect returns s ∩ o.
func (s NodeSet) Intersect(o NodeSet) NodeSet {
	for i := range s.w {
		s.w[i] &= o.w[i]
	}
	return s
}

// Difference returns s \ o.
func (s NodeSet) Difference(o NodeSet) NodeSet {
	for i := range s.w {
		s.w[i] &^= o.w[i]
	}
	return s
}

// IsSubsetOf reports whether every node of s is in o.
func (s NodeSet) IsSubsetOf(o NodeSet) bool { return s.Difference(o).IsEmpty() }

// Less reports whether s is numerically smaller than o (bit i = node i).
func (s NodeSet) Less(o NodeSet) bool {
	for i := nodeWords - 1; i >= 0; i-- {
		if s.w[i] != o.w[i] {
			return s.w[i] < o.w[i]
		}
	}
	return false
}

// IDs returns the ids in ascending order.
func (s NodeSet) IDs() []int {
	ids := make([]int, 0, s.Len())
	forEach(s.w[:], func(id int) { ids = append(ids, id) })
	return ids
}

// Min returns the smallest id, or -1 for the empty set.
func (s NodeSet) Min() int {
	for i, w := range s.w {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// String returns the kernel list form.
func (s NodeSet) String() string { return formatList(s.w[:]) }

// Mask returns the kernel hex mask form.
func (s NodeSet) Mask() string { return formatMask(s.w[:]) }

// MarshalJSON writes the list form.
func (s NodeSet) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads the list form.
func (s *NodeSet) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("node set must be a list string like \"0-1,4\": %w", err)
	}
	p, err := ParseNodeList(str)
	if err != nil {
		return err
	}
	*s = p
	return nil
}

// MarshalText writes the list form (TOML, YAML).
func (s NodeSet) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the list form.
func (s *NodeSet) UnmarshalText(b []byte) error {
	p, err := ParseNodeList(string(b))
	if err != nil {
		return err
	}
	*s = p
	return nil
}
