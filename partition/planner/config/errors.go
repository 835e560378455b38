package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/internal/echo"
)

// ConfigError is one problem with a config, located at a key (and a line
// when the file is known). Plan and Parse return every problem they find
// at once as Errors, so one run shows the whole list.
type ConfigError struct {
	File string // "config.toml"; "" for a config built in code
	Line int    // 1-based; 0 when unknown
	Key  string // "host.reserved_cpus", "partition[1].labels"; "" when none
	Msg  string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "key %q: ", echo.Value(e.Key))
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one config, in file order.
type Errors []*ConfigError

func (es Errors) Error() string { return strings.Join(es.Lines(""), "\n") }

// maxShownErrors is how many problems one message lists: a file of 60,000
// unknown keys would otherwise print tens of megabytes, and the first
// screenful is what a user fixes first.
const maxShownErrors = 100

// Lines are the problems as lines, each after indent, at most
// maxShownErrors of them, followed by how many more there are.
func (es Errors) Lines(indent string) []string {
	n := min(len(es), maxShownErrors)
	lines := make([]string, 0, n+1)
	for _, e := range es[:n] {
		lines = append(lines, indent+e.Error())
	}
	if more := len(es) - n; more > 0 {
		lines = append(lines, fmt.Sprintf("%s... and %d more problems (fix these and run again)", indent, more))
	}
	return lines
}

// Unwrap lets errors.As find a single ConfigError.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Collector gathers the problems of a config while it is validated and
// planned, each at its key: errors are located through the config's
// source (file name and key lines) when it has one (NewCollector).
type Collector struct {
	src  *source
	errs Errors
	// seen and keys index errs, so that adding stays constant-time
	// however many problems a hostile file has (a scan of errs made
	// 60,000 unknown keys take 31 s).
	seen map[[2]string]bool // key, message
	keys map[string]bool
}

// NewCollector collects problems of c (nil: of no file, as a plan file
// is checked).
func NewCollector(c *Config) *Collector {
	if c == nil {
		return &Collector{}
	}
	return &Collector{src: c.src}
}

// Add reports a problem at key (a config key, "kubelet.port"); the same
// problem at the same key is reported once. Every string argument is
// input echoed back (a value, a name, a path) and is shown as
// echo.Value shows it, its first bytes and its length; text of the
// tool's own that must be shown whole (an explanation, a list of what is
// allowed) is passed as Whole.
func (c *Collector) Add(key, format string, args ...any) {
	e := &ConfigError{Key: key, Msg: fmt.Sprintf(format, echoed(args)...)}
	if c.seen[[2]string{key, e.Msg}] {
		return // a shared setting checked once per partition
	}
	if c.seen == nil {
		c.seen, c.keys = map[[2]string]bool{}, map[string]bool{}
	}
	c.seen[[2]string{key, e.Msg}] = true
	c.keys[key] = true
	if c.src != nil {
		e.File = c.src.name
		e.Line = c.src.line(key)
	}
	c.errs = append(c.errs, e)
}

// Whole is text of the tool's own in a message, which Add shows whole:
// an explanation that already echoes its values through echo.Value, or a
// list of what is allowed.
type Whole string

// echoed are args as Add formats them: strings bounded by echo.Value,
// Whole text as it is.
func echoed(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case string:
			out[i] = echo.Value(a)
		case Whole:
			out[i] = string(a)
		default:
			out[i] = a
		}
	}
	return out
}

// Has says whether a problem was reported at key.
func (c *Collector) Has(key string) bool { return c.keys[key] }

// Err returns the collected errors in file order (stable, so problems on
// one line keep the order they were found in), or nil.
func (c *Collector) Err() error {
	if len(c.errs) == 0 {
		return nil
	}
	out := append(Errors(nil), c.errs...)
	sort.SliceStable(out, func(i, j int) bool {
		return lineOrder(out[i].Line) < lineOrder(out[j].Line)
	})
	return out
}

// lineOrder puts errors without a line after the located ones.
func lineOrder(l int) int {
	if l == 0 {
		return int(^uint(0) >> 1)
	}
	return l
}
