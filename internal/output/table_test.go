package output

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestTableWideAddsItsColumns(t *testing.T) {
	cols := []Column{{Name: "NAME"}, {Name: "SLICE", Wide: true}, {Name: "CPUS"}}
	for wide, want := range map[bool]string{
		false: "NAME  CPUS\na     0-3\n",
		true:  "NAME  SLICE    CPUS\na     a.slice  0-3\n",
	} {
		tb := NewTable(wide, cols...)
		tb.Row("a", "a.slice", "0-3")
		var b bytes.Buffer
		require.NoError(t, tb.Write(&b))
		assert.Equal(t, want, b.String(), "wide %v", wide)
	}
	assert.Panics(t, func() { NewTable(false, cols...).Row("a", "0-3") }, "a row without the wide column's cell")
}

func TestAbbreviateKeepsTheHeadAndCountsTheRest(t *testing.T) {
	list := "2,4,6,8,10,12,14,16,18,20,22,24"
	assert.Equal(t, list, Abbreviate(list, 0), "wide: whole")
	assert.Equal(t, list, Abbreviate(list, len(list)), "fits: whole")
	assert.Equal(t, "2,4,6,8 + 8 more...", Abbreviate(list, 20))
	assert.Equal(t, "2 + 11 more...", Abbreviate(list, 3), "never less than one item")
}

func TestAbbreviateFitsAndLosesNoCount(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		items := rapid.SliceOfN(rapid.StringMatching(`[0-9]{1,3}(-[0-9]{1,3})?`), 1, 60).Draw(t, "items")
		max := rapid.IntRange(16, 80).Draw(t, "max")
		got := Abbreviate(strings.Join(items, ","), max)
		head, rest, cut := strings.Cut(got, " + ")
		if !cut {
			if got != strings.Join(items, ",") {
				t.Fatalf("%q: not the list and not abbreviated", got)
			}
			return
		}
		kept := strings.Split(head, ",")
		var more int
		if _, err := fmt.Sscanf(rest, "%d more...", &more); err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		if len(kept)+more != len(items) || strings.Join(items[:len(kept)], ",") != head {
			t.Fatalf("%q of %d items", got, len(items))
		}
		if len(kept) > 1 && utf8.RuneCountInString(got) > max {
			t.Fatalf("%q is wider than %d", got, max)
		}
	})
}

func TestWrapBreaksAtSpacesAndCommasAndKeepsEveryCharacter(t *testing.T) {
	text := "CPUs 0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30 and more words here"
	got := Wrap(text, 4, 6, 30)
	lines := strings.Split(got, "\n")
	require.Greater(t, len(lines), 1)
	assert.LessOrEqual(t, 4+len(lines[0]), 30)
	for _, l := range lines[1:] {
		assert.True(t, strings.HasPrefix(l, "      "), "%q is not indented", l)
		assert.LessOrEqual(t, len(l), 30, l)
	}
	joined := lines[0]
	for _, l := range lines[1:] {
		l = strings.TrimLeft(l, " ")
		if strings.HasSuffix(joined, ",") {
			joined += l
		} else {
			joined += " " + l
		}
	}
	assert.Equal(t, text, joined)
	assert.Equal(t, text, Wrap(text, 4, 6, 0), "wide: one line")
	assert.Equal(t, "short", Wrap("short", 4, 6, 30))
}
