package bitmask

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPUList(t *testing.T) {
	cases := []struct {
		in   string
		ids  []int
		out  string
		mask string
	}{
		{"", []int{}, "", "00000000"},
		{"0", []int{0}, "0", "00000001"},
		{"0-3,8-11", []int{0, 1, 2, 3, 8, 9, 10, 11}, "0-3,8-11", "00000f0f"},
		{"0,1", []int{0, 1}, "0-1", "00000003"},
		{"0-5,48-53", []int{0, 1, 2, 3, 4, 5, 48, 49, 50, 51, 52, 53}, "0-5,48-53", "003f0000,0000003f"},
		{"1,3,5,7", []int{1, 3, 5, 7}, "1,3,5,7", "000000aa"},
		{"3,1", []int{1, 3}, "1,3", "0000000a"},
		{"63-64", []int{63, 64}, "63-64", "00000001,80000000,00000000"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			s, err := ParseCPUList(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.ids, s.IDs())
			assert.Equal(t, c.out, s.String())
			assert.Equal(t, c.mask, s.Mask())
			m, err := ParseCPUMask(c.mask)
			require.NoError(t, err)
			assert.True(t, m.Equal(s), "mask round trip %s", m)
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{",", "1,", "a", "-1", "3-1", "1-", "01", "+1", "1--2", "65536", "0-65536", " 1"} {
		_, err := ParseCPUList(in)
		assert.Error(t, err, "list %q", in)
	}
	for _, in := range []string{"", "g", "ff,ff", "123456789", ",", "0x1", "+1"} {
		_, err := ParseCPUMask(in)
		assert.Error(t, err, "mask %q", in)
	}
	_, err := ParseNodeList("1024")
	assert.ErrorContains(t, err, "out of range (allowed 0..1023)")
	_, err = ParseNodeMask("1" + ",00000000" + ",00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000")
	assert.ErrorContains(t, err, "out of range")
}

func TestCPUSetOps(t *testing.T) {
	a := MustParseCPUList("0-7")
	b := MustParseCPUList("4-11")
	assert.Equal(t, "0-11", a.Union(b).String())
	assert.Equal(t, "4-7", a.Intersect(b).String())
	assert.Equal(t, "0-3", a.Difference(b).String())
	assert.Equal(t, "", a.Difference(a).String())
	assert.True(t, a.Difference(a).IsEmpty())
	assert.True(t, MustParseCPUList("1-2").IsSubsetOf(a))
	assert.False(t, b.IsSubsetOf(a))
	assert.True(t, a.Intersects(b))
	assert.True(t, a.Has(7))
	assert.False(t, a.Has(8))
	assert.False(t, a.Has(-1))
	assert.Equal(t, 8, a.Len())
	// Inputs are not aliased by results.
	u := a.Union(CPUSet{})
	_ = u.Union(NewCPUSet(100))
	assert.Equal(t, "0-7", a.String())
}

func TestNodeSet(t *testing.T) {
	s := MustParseNodeList("0,8,250-255")
	assert.Equal(t, 8, s.Len())
	assert.Equal(t, "0,8,250-255", s.String())
	assert.Equal(t, 0, s.Min())
	assert.Equal(t, -1, NodeSet{}.Min())
	assert.True(t, NewNodeSet(1, 2).Less(NewNodeSet(0, 3)), "{1,2}=0b0110 < {0,3}=0b1001")
	assert.False(t, NewNodeSet(0, 3).Less(NewNodeSet(1, 2)))
	assert.True(t, NewNodeSet(1023).Has(1023))
	assert.Equal(t, NewNodeSet(0, 1), MustParseNodeList("0-1"), "values compare with ==")
	m, err := ParseNodeMask(NewNodeSet(1, 40).Mask())
	require.NoError(t, err)
	assert.Equal(t, NewNodeSet(1, 40), m)
	assert.Equal(t, "0", NewNodeSet(0, 1).Remove(1).String())
}

func TestJSONAndText(t *testing.T) {
	var c CPUSet
	require.NoError(t, c.UnmarshalJSON([]byte(`"0-3"`)))
	b, _ := c.MarshalJSON()
	assert.Equal(t, `"0-3"`, string(b))
	assert.Error(t, c.UnmarshalJSON([]byte(`3`)))
	var n NodeSet
	require.NoError(t, n.UnmarshalText([]byte("2-3")))
	assert.Equal(t, "2-3", n.String())
}

func TestTrim(t *testing.T) {
	assert.Equal(t, "0-3", Trim("0-3\n\x00"))
	assert.Equal(t, "", Trim("\n"))
}

// FuzzCPUList: parse never panics, and whatever parses formats back to a list
// that parses to the same set (list and mask forms).
func FuzzCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8-11", "", "0", "1,3,5", "0-65535", "63-64,128"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCPUList(s)
		if err != nil {
			return
		}
		back, err := ParseCPUList(c.String())
		if err != nil || !back.Equal(c) {
			t.Fatalf("list round trip of %q: %q, %v", s, c.String(), err)
		}
		m, err := ParseCPUMask(c.Mask())
		if err != nil || !m.Equal(c) {
			t.Fatalf("mask round trip of %q: %q, %v", s, c.Mask(), err)
		}
	})
}

// FuzzCPUMask: parse never panics and round-trips through the list form.
func FuzzCPUMask(f *testing.F) {
	for _, s := range []string{"ff,000000ff", "00000001", "f", "0", "80000000,00000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCPUMask(s)
		if err != nil {
			return
		}
		back, err := ParseCPUList(c.String())
		if err != nil || !back.Equal(c) {
			t.Fatalf("round trip of %q: %q, %v", s, c.String(), err)
		}
	})
}

// FuzzNodeList: node lists never panic and round-trip.
func FuzzNodeList(f *testing.F) {
	for _, s := range []string{"0,8,250-255", "0-1023", "", "1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNodeList(s)
		if err != nil {
			return
		}
		back, err := ParseNodeList(n.String())
		if err != nil || back != n {
			t.Fatalf("round trip of %q: %q, %v", s, n.String(), err)
		}
	})
}

func BenchmarkParseCPUList(b *testing.B) {
	for b.Loop() {
		_, _ = ParseCPUList("0-5,48-53,96-101,144-149")
	}
}

func TestNodeSetWord(t *testing.T) {
	s := NewNodeSet(0, 3, 63, 64, 1023)
	if got := s.Word(0); got != 1|1<<3|1<<63 {
		t.Errorf("word 0 = %#x", got)
	}
	if s.Word(1) != 1 || s.Word(15) != 1<<63 || s.Word(-1) != 0 || s.Word(16) != 0 {
		t.Errorf("words 1, 15, -1, 16: %#x %#x %#x %#x", s.Word(1), s.Word(15), s.Word(-1), s.Word(16))
	}
}
func TestNodeSetWordsInPlace(t *testing.T) {
	s := NewNodeSet(1, 64, 1023)
	w := s.Words()
	for i := 0; i < NodeWords; i++ {
		if w[i] != s.Word(i) {
			t.Fatalf("word %d: %#x in place, %#x by Word", i, w[i], s.Word(i))
		}
	}
	w[0] |= 1 << 5 // written in place: the set has node 5 now
	if !s.Has(5) || s.Len() != 4 {
		t.Errorf("after a write through Words: %s", s)
	}
}
