package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// shown is text a daemon, a socket's file name or a scenario gave, as a
// table prints it: itself when every character is a printable one, else
// quoted as Go quotes strings ("\x1b[2J", "a\tb"), so that ESC, CR, LF,
// BEL, a tab (a column of tabwriter's) or a bidi override is seen, not
// obeyed (#38: a pod named with them cleared the screen and forged rows
// of allocations, admit and simulate). The one escaper of every table.
func shown(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// shownAll is shown of each.
func shownAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shown(s)
	}
	return out
}
