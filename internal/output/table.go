package output

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Width is the budget of the default (not wide) tables, in columns: a
// terminal of 120 shows them without wrapping, as kubectl's default
// tables are meant to; -o wide adds what does not fit.
const Width = 120

// ListWidth is the widest a list (of CPUs) is in a default table's cell
// before Abbreviate cuts it: the contiguous lists of any machine fit,
// the interleaved ones (2,4,6,…) of a 100-CPU socket do not.
const ListWidth = 24

// Column is one column of a table; a Wide one is printed only with
// -o wide, as kubectl's extra columns are.
type Column struct {
	Name string
	Wide bool
}

// Table is a table for people: the columns a width chooses, aligned with
// two spaces between them, as kubectl prints its tables.
type Table struct {
	columns []Column
	wide    bool
	rows    [][]string
}

// NewTable is a table of columns, all of them when wide, else the ones
// not marked Wide.
func NewTable(wide bool, columns ...Column) *Table {
	return &Table{columns: columns, wide: wide}
}

// Columns are the names of the columns printed.
func (t *Table) Columns() []string {
	var out []string
	for _, c := range t.columns {
		if t.wide || !c.Wide {
			out = append(out, c.Name)
		}
	}
	return out
}

// Row adds a row: one cell for every column, wide or not, in the
// columns' order. A row of another length is a bug of the caller's and
// panics, since its cells would land under the wrong headers.
func (t *Table) Row(cells ...string) {
	if len(cells) != len(t.columns) {
		panic(fmt.Sprintf("output: table row of %d cells for %d columns", len(cells), len(t.columns)))
	}
	t.rows = append(t.rows, cells)
}

// Write prints the header and the rows.
func (t *Table) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Columns(), "\t"))
	for _, r := range t.rows {
		var cells []string
		for i, c := range t.columns {
			if t.wide || !c.Wide {
				cells = append(cells, r[i])
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// Abbreviate shortens a comma-separated list (a CPU list such as
// "2,4,6,…") to at most max columns for a default table's cell, keeping
// the first items and saying how many were left out, as kubectl's
// "a,b + 3 more...". The list is whole when it fits, and always with
// -o wide: the caller passes max 0 then.
func Abbreviate(list string, max int) string {
	if max <= 0 || utf8.RuneCountInString(list) <= max {
		return list
	}
	items := strings.Split(list, ",")
	for keep := len(items) - 1; keep >= 1; keep-- {
		s := fmt.Sprintf("%s + %d more...", strings.Join(items[:keep], ","), len(items)-keep)
		if utf8.RuneCountInString(s) <= max {
			return s
		}
	}
	return fmt.Sprintf("%s + %d more...", items[0], len(items)-1)
}

// Wrap breaks text into lines of at most width columns after a space or
// a comma, the first line starting after a prefix of first columns (a
// key already written), the others indented by indent columns. A piece
// without a break longer than a line stays whole. width 0 (-o wide)
// leaves text on one line.
func Wrap(text string, first, indent, width int) string {
	if width <= 0 || first+utf8.RuneCountInString(text) <= width {
		return text
	}
	var b strings.Builder
	col := first
	for _, piece := range pieces(text) {
		n := utf8.RuneCountInString(piece)
		if b.Len() > 0 && col > indent && col+n > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
			piece = strings.TrimLeft(piece, " ")
			n = utf8.RuneCountInString(piece)
		}
		b.WriteString(piece)
		col += n
	}
	return strings.TrimRight(b.String(), " ")
}

// pieces splits text before each space and after each comma that is not
// followed by a space: the places a line may break.
func pieces(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		switch {
		case r == ' ' && i > start:
			out = append(out, text[start:i])
			start = i
		case r == ',' && (i+1 >= len(text) || text[i+1] != ' '):
			out = append(out, text[start:i+1])
			start = i + 1
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
