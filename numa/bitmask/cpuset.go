package bitmask

import (
	"encoding/json"
	"fmt"
)

// MaxCPUs bounds CPU ids. The kernel's NR_CPUS tops out at 8192; the bound
// keeps a hostile list like "0-4000000000" from allocating gigabytes.
const MaxCPUs = 1 << 16

// CPUSet is an immutable set of CPU ids. The zero value is the empty set.
// Operations return new sets and never alias their inputs.
type CPUSet struct {
	words []uint64 // trimmed: no trailing zero words
}

// NewCPUSet returns the set of the given ids. It panics on negative ids or ids
// at or above MaxCPUs, which are programming errors; parse input instead.
func NewCPUSet(ids ...int) CPUSet {
	var w []uint64
	for _, id := range ids {
		if id < 0 || id >= MaxCPUs {
			panic(fmt.Sprintf("bitmask: CPU id %d out of range", id))
		}
		w = setBit(w, id)
	}
	return CPUSet{words: w}
}

// ParseCPUList parses the kernel list form ("0-3,8-11"; "" is the empty set).
func ParseCPUList(s string) (CPUSet, error) {
	var w []uint64
	err := parseList(s, MaxCPUs, func(lo, hi int) {
		for id := lo; id <= hi; id++ {
			w = setBit(w, id)
		}
	})
	if err != nil {
		return CPUSet{}, err
	}
	return CPUSet{words: trim(w)}, nil
}

// ParseCPUMask parses the kernel hex mask form ("ff,000000ff").
func ParseCPUMask(s string) (CPUSet, error) {
	var w []uint64
	err := parseMask(s, MaxCPUs, func(index int, word uint32) {
		w = grow(w, index/2+1)
		w[index/2] |= uint64(word) << (32 * (index % 2))
	})
	if err != nil {
		return CPUSet{}, err
	}
	return CPUSet{words: trim(w)}, nil
}

// MustParseCPUList is ParseCPUList for literals in code and tests.
func MustParseCPUList(s string) CPUSet {
	c, err := ParseCPUList(s)
	if err != nil {
		panic(err)
	}
	return c
}

// String returns the kernel list form.
func (c CPUSet) String() string { return formatList(c.words) }

// Mask returns the kernel hex mask form.
func (c CPUSet) Mask() string { return formatMask(c.words) }

// Len is the number of CPUs in the set.
func (c CPUSet) Len() int { return count(c.words) }

// IsEmpty reports whether the set has no CPU.
func (c CPUSet) IsEmpty() bool { return len(c.words) == 0 }

// IsZero is IsEmpty, for encoding/json's omitzero.
func (c CPUSet) IsZero() bool { return c.IsEmpty() }

// Has reports whether id is in the set.
func (c CPUSet) Has(id int) bool {
	return id >= 0 && id/64 < len(c.words) && c.words[id/64]&(1<<(id%64)) != 0
}

// IDs returns the ids in ascending order.
func (c CPUSet) IDs() []int {
	ids := make([]int, 0, c.Len())
	forEach(c.words, func(id int) { ids = append(ids, id) })
	return ids
}

// Equal reports whether both sets hold the same ids.
func (c CPUSet) Equal(o CPUSet) bool {
	if len(c.words) != len(o.words) {
		return false
	}
	for i := range c.words {
		if c.words[i] != o.words[i] {
			return false
		}
	}
	return true
}

// Union returns c ∪ o.
func (c CPUSet) Union(o CPUSet) CPUSet {
	a, b := c.words, o.words
	if len(a) < len(b) {
		a, b = b, a
	}
	w := append([]uint64(nil), a...)
	for i := range b {
		w[i] |= b[i]
	}
	return CPUSet{words: w}
}

// Intersect returns c ∩ o.
func (c CPUSet) Intersect(o CPUSet) CPUSet {
	n := min(len(c.words), len(o.words))
	w := make([]uint64, n)
	for i := range w {
		w[i] = c.words[i] & o.words[i]
	}
	return CPUSet{words: trim(w)}
}

// Difference returns c \ o.
func (c CPUSet) Difference(o CPUSet) CPUSet {
	w := append([]uint64(nil), c.words...)
	for i := range w {
		if i < len(o.words) {
			w[i] &^= o.words[i]
		}
	}
	return CPUSet{words: trim(w)}
}

// IsSubsetOf reports whether every id of c is in o.
func (c CPUSet) IsSubsetOf(o CPUSet) bool { return c.Difference(o).IsEmpty() }

// Intersects reports whether c and o share an id.
func (c CPUSet) Intersects(o CPUSet) bool { return !c.Intersect(o).IsEmpty() }

// MarshalJSON writes the list form, the stable textual schema of the project.
func (c CPUSet) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

// UnmarshalJSON reads the list form.
func (c *CPUSet) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("CPU set must be a list string like \"0-3,8\": %w", err)
	}
	p, err := ParseCPUList(s)
	if err != nil {
		return err
	}
	*c = p
	return nil
}

// MarshalText and UnmarshalText let TOML and YAML use the list form too.
func (c CPUSet) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads the list form.
func (c *CPUSet) UnmarshalText(b []byte) error {
	p, err := ParseCPUList(string(b))
	if err != nil {
		return err
	}
	*c = p
	return nil
}

func setBit(w []uint64, id int) []uint64 {
	w = grow(w, id/64+1)
	w[id/64] |= 1 << (id % 64)
	return w
}

func grow(w []uint64, n int) []uint64 {
	for len(w) < n {
		w = append(w, 0)
	}
	return w
}

func trim(w []uint64) []uint64 {
	for len(w) > 0 && w[len(w)-1] == 0 {
		w = w[:len(w)-1]
	}
	if len(w) == 0 {
		return nil
	}
	return w
}
