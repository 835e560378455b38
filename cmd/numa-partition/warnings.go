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
// well. Under journald each line has the warning priority, as a logged
// warning.
func warnAll(w io.Writer, warnings ...string) {
	for _, m := range warnings {
		fmt.Fprintf(w, "%swarning: %s\n", journalPrefix(w, 4), m)
	}
}
