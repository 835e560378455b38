package main

import (
	"fmt"
	"io"
)

// warnAll writes each warning as a line "warning: …" to w, the app's
// ErrWriter (standard error): standard output carries what the command
// was asked for (a report, a diff, an object), which scripts and pipes
// read, and a warning is no part of it. kubectl prints its warnings to
// standard error too. --output json and yaml keep them in the object as
// well.
func warnAll(w io.Writer, warnings ...string) {
	for _, m := range warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
}
