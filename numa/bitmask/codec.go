// Package bitmask holds the two id-set types of the project: CPUSet for CPU
// ids (unbounded, as the kernel's NR_CPUS varies) and NodeSet for NUMA node
// ids (a fixed 1024-bit value, the kernel's MAX_NUMNODES, so it is
// comparable, usable as a map key and allocation-free in the allocator's hot
// loops). Both read and write the kernel's two textual forms: the list form
// of cpulist/nodelist files ("0-3,8-11") and the hex mask form of cpumap
// files ("ff,000000ff", 32-bit words, most significant first). The codec is
// shared, so there is exactly one parser for each form.
package bitmask

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/internal/echo"
)

// parseList parses the kernel list form into word-packed bits. limit is the
// exclusive upper bound for ids; grow is called to make room for id hi.
func parseList(s string, limit int, set func(lo, hi int)) error {
	if s == "" {
		return nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, err := parseRange(part, limit)
		if err != nil {
			return fmt.Errorf("invalid list %q: %w", echo.Value(s), err)
		}
		set(lo, hi)
	}
	return nil
}

func parseRange(part string, limit int) (int, int, error) {
	if part == "" {
		return 0, 0, fmt.Errorf("empty element")
	}
	loS, hiS, isRange := strings.Cut(part, "-")
	lo, err := parseID(loS, limit)
	if err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	hi, err := parseID(hiS, limit)
	if err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("range %q is reversed", echo.Value(part))
	}
	return lo, hi, nil
}

func parseID(s string, limit int) (int, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || s[0] == '+' {
		return 0, fmt.Errorf("id %q is not a decimal number without sign or leading zeros", echo.Value(s))
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("id %q is not a decimal number", echo.Value(s))
	}
	if n >= uint64(limit) {
		return 0, fmt.Errorf("id %d is out of range (allowed 0..%d)", n, limit-1)
	}
	return int(n), nil
}

// parseMask parses the kernel hex mask form. Groups are 32-bit words, most
// significant first; every group after the first must have exactly 8 digits
// (the kernel pads them), the first may be shorter.
func parseMask(s string, limit int, setWord32 func(index int, word uint32)) error {
	if s == "" {
		return fmt.Errorf("invalid mask %q: empty", echo.Value(s))
	}
	groups := strings.Split(s, ",")
	for i, g := range groups {
		if g == "" || len(g) > 8 || (i > 0 && len(g) != 8) {
			return fmt.Errorf("invalid mask %q: group %q must be 8 hex digits", echo.Value(s), echo.Value(g))
		}
		w, err := strconv.ParseUint(g, 16, 32)
		if err != nil || strings.ContainsAny(g, "+-xX") {
			return fmt.Errorf("invalid mask %q: group %q is not hexadecimal", echo.Value(s), echo.Value(g))
		}
		index := len(groups) - 1 - i
		if w != 0 {
			top := index*32 + 31 - bits.LeadingZeros32(uint32(w))
			if top >= limit {
				return fmt.Errorf("invalid mask %q: bit %d is out of range (allowed 0..%d)", echo.Value(s), top, limit-1)
			}
			setWord32(index, uint32(w))
		}
	}
	return nil
}

// formatList writes ids in the kernel list form, collapsing runs of three or
// more into ranges and writing a run of two as "a-b" like the kernel does.
func formatList(words []uint64) string {
	var b strings.Builder
	start, prev := -1, -2
	flush := func() {
		if start < 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(start))
		if prev > start {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(prev))
		}
	}
	forEach(words, func(id int) {
		if id == prev+1 && start >= 0 {
			prev = id
			return
		}
		flush()
		start, prev = id, id
	})
	flush()
	return b.String()
}

// formatMask writes the kernel hex mask form with every group padded to 8
// digits, using as few groups as the highest bit needs (at least one).
func formatMask(words []uint64) string {
	n := 1
	for i := len(words) - 1; i >= 0; i-- {
		if words[i] != 0 {
			top := i*64 + 63 - bits.LeadingZeros64(words[i])
			n = top/32 + 1
			break
		}
	}
	var b strings.Builder
	for g := n - 1; g >= 0; g-- {
		var w uint32
		if g/2 < len(words) {
			w = uint32(words[g/2] >> (32 * (g % 2)))
		}
		fmt.Fprintf(&b, "%08x", w)
		if g > 0 {
			b.WriteByte(',')
		}
	}
	return b.String()
}

func forEach(words []uint64, fn func(id int)) {
	for i, w := range words {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			fn(i*64 + t)
			w &= w - 1
		}
	}
}

func count(words []uint64) int {
	n := 0
	for _, w := range words {
		n += bits.OnesCount64(w)
	}
	return n
}

// Trim removes what kernels put around sysfs values: whitespace and, on some
// kernels, a trailing NUL ("0-3\n\x00").
func Trim(s string) string {
	return strings.Trim(s, " \t\r\n\x00")
}
