package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"syscall"
)

// The --log-format values.
const (
	logFormatText = "text"
	logFormatJSON = "json"
)

// newLogHandler is the one log handler of every command, the daemons
// (allocator serve) included: slog's text (key=value) or JSON handler on
// w at level. Under journald (journal set: JOURNAL_STREAM) each line
// starts with its sd-daemon priority, <3> for errors, <4> warnings, <6>
// info, <7> debug (sd-daemon(3)), which journald strips and keeps as the
// entry's PRIORITY, so that journalctl -p warning finds the warnings; the
// time is left out, journald stamps each entry itself.
func newLogHandler(w io.Writer, format string, level slog.Level, journal bool) (slog.Handler, error) {
	opts := &slog.HandlerOptions{Level: level}
	var out io.Writer = w
	var pw *priorityWriter
	if journal {
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}
		pw = &priorityWriter{w: w}
		out = pw
	}
	var h slog.Handler
	switch format {
	case logFormatText:
		h = slog.NewTextHandler(out, opts)
	case logFormatJSON:
		h = slog.NewJSONHandler(out, opts)
	default:
		return nil, fmt.Errorf("--log-format %q: allowed are %s, %s", format, logFormatText, logFormatJSON)
	}
	if pw != nil {
		return journalHandler{inner: h, out: pw}, nil
	}
	return h, nil
}

// journalPriority is the sd-daemon priority of a level: syslog's err,
// warning, info and debug.
func journalPriority(l slog.Level) int {
	switch {
	case l >= slog.LevelError:
		return 3
	case l >= slog.LevelWarn:
		return 4
	case l >= slog.LevelInfo:
		return 6
	default:
		return 7
	}
}

// priorityWriter starts every write, one record's line (slog's handlers
// write a record in one Write, a message's newlines escaped), with the
// priority of the record being handled.
type priorityWriter struct {
	mu       sync.Mutex // held by journalHandler.Handle around one record
	w        io.Writer
	priority int
}

func (p *priorityWriter) Write(b []byte) (int, error) {
	line := append(fmt.Appendf(nil, "<%d>", p.priority), b...)
	if _, err := p.w.Write(line); err != nil {
		return 0, err
	}
	return len(b), nil
}

// journalHandler hands each record to the inner handler with its
// priority set on the writer they share; the handlers WithAttrs and
// WithGroup make share it too.
type journalHandler struct {
	inner slog.Handler
	out   *priorityWriter
}

func (h journalHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h journalHandler) Handle(ctx context.Context, r slog.Record) error {
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	h.out.priority = journalPriority(r.Level)
	return h.inner.Handle(ctx, r)
}

func (h journalHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return journalHandler{inner: h.inner.WithAttrs(attrs), out: h.out}
}

func (h journalHandler) WithGroup(name string) slog.Handler {
	return journalHandler{inner: h.inner.WithGroup(name), out: h.out}
}

// stderrIsJournal says whether standard error is the journal's stream:
// systemd sets JOURNAL_STREAM to its "device:inode", and a process that
// inherited the variable but writes elsewhere (2>file, a pipe from a
// shell inside a unit) must not prefix priorities there (sd-daemon(3),
// systemd.exec(5)).
func stderrIsJournal() bool {
	return isJournal(os.Getenv("JOURNAL_STREAM"), os.Stderr)
}

func isJournal(stream string, f *os.File) bool {
	var dev, ino uint64
	if _, err := fmt.Sscanf(stream, "%d:%d", &dev, &ino); err != nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == dev && uint64(st.Ino) == ino
}

// journalPrefix is the sd-daemon priority to start a line written to w
// with: "<N>" when w is standard error and that is the journal, else
// "". The lines the CLI writes itself (warnings, the last error) carry
// their priority as the log's do.
func journalPrefix(w io.Writer, priority int) string {
	if f, ok := w.(*os.File); ok && f == os.Stderr && stderrIsJournal() {
		return fmt.Sprintf("<%d>", priority)
	}
	return ""
}
