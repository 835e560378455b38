// Package echo bounds the input that error messages repeat back to the
// user. A config value, key or name is echoed so the user can find it,
// and its first bytes are enough for that: a 1 MiB value echoed whole
// made one error 1.5 MB of stderr (#38 item 6).
package echo

import (
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// MaxBytes is how much of a value an error message shows.
const MaxBytes = 80

// Value is input as an error message shows it: whole when it is at most
// MaxBytes long, otherwise its first MaxBytes bytes (cut at a character
// boundary) followed by "… (N bytes)". %q quotes the shown part, as %q
// quotes a string; %s and %v print it as it is.
type Value string

// Format implements fmt.Formatter, so that a Value in place of a string
// argument is all a message needs.
func (v Value) Format(f fmt.State, verb rune) {
	head := v.head()
	if verb == 'q' {
		_, _ = io.WriteString(f, strconv.Quote(head))
	} else {
		_, _ = io.WriteString(f, head)
	}
	if len(head) < len(v) {
		_, _ = fmt.Fprintf(f, "… (%d bytes)", len(v))
	}
}

// String is the value as %s shows it.
func (v Value) String() string { return fmt.Sprintf("%s", v) }

// Quoted is the value as %q shows it.
func (v Value) Quoted() string { return fmt.Sprintf("%q", v) }

// head is the part of v that is shown.
func (v Value) head() string {
	s := string(v)
	if len(s) <= MaxBytes {
		return s
	}
	n := MaxBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
