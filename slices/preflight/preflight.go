// Package preflight is apply's preflight phase, as kubeadm's: before
// apply changes anything on the host it checks, for every partition, what
// the bundle needs from the host and does not make itself (the kubelet
// and containerd binaries, the cluster CA, the kubeconfig, the CNI
// plugins, free ports, swap, the cgroup driver and mode). A check's
// errors stop apply (--dry-run lists them); its warnings do not.
// --ignore-preflight-errors names checks (Check.Name) whose errors become
// warnings.
//
// Every file is read below the host's root through fsutil.Root: bounded,
// never following a link out of the root.
package preflight

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Check is one preflight check (kubeadm's Checker). Name is what
// --ignore-preflight-errors names: every check of a kind has the same.
// Partition is the partition it checks, "" for the host's.
type Check interface {
	Name() string
	Partition() string
	Check() (warnings, errs []error)
}

// Status is a check's outcome.
type Status string

// Statuses, from best to worst.
const (
	StatusPass    Status = "pass"
	StatusWarning Status = "warning"
	StatusError   Status = "error"
)

// Result is one check's outcome, as apply --output json lists it.
type Result struct {
	Check     string `json:"check"`
	Partition string `json:"partition,omitempty"`
	// Status is error when the check has errors (apply refuses), warning
	// when it has warnings only (or its errors are ignored), else pass.
	Status   Status   `json:"status"`
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Ignored: --ignore-preflight-errors made this check's errors
	// warnings (they are listed in warnings).
	Ignored bool `json:"ignored,omitempty"`

	errs []error // Errors, as the check returned them
}

// Report is every check's result, in the order they ran.
type Report struct {
	Results []Result `json:"results"`
}

// Run runs every check, in order, and makes the errors of the checks
// ignore names warnings. It never stops early: the report lists all.
func Run(checks []Check, ignore Ignore) *Report {
	rep := &Report{Results: []Result{}}
	for _, c := range checks {
		warns, errs := c.Check()
		r := Result{Check: c.Name(), Partition: c.Partition(), Status: StatusPass}
		if len(errs) > 0 && ignore.Has(c.Name()) {
			r.Ignored = true
			warns = append(warns, errs...)
			errs = nil
		}
		for _, w := range warns {
			r.Warnings = append(r.Warnings, w.Error())
		}
		for _, e := range errs {
			r.Errors = append(r.Errors, e.Error())
		}
		r.errs = errs
		switch {
		case len(errs) > 0:
			r.Status = StatusError
		case len(warns) > 0:
			r.Status = StatusWarning
		}
		rep.Results = append(rep.Results, r)
	}
	return rep
}

// Err is an *Error when a check has errors, else nil.
func (r *Report) Err() error {
	if r == nil || !slices.ContainsFunc(r.Results, func(x Result) bool { return x.Status == StatusError }) {
		return nil
	}
	return &Error{Report: r}
}

// Warnings are every warning, one line each, as kubeadm prints them:
// "[WARNING Swap]: partition node0: …".
func (r *Report) Warnings() []string {
	var out []string
	if r == nil {
		return nil
	}
	for _, x := range r.Results {
		for _, w := range x.Warnings {
			out = append(out, fmt.Sprintf("preflight [WARNING %s]: %s", x.Check, w))
		}
	}
	return out
}

// Error is a preflight that failed: apply refuses before it changes
// anything. It unwraps to every check's errors (a *PortInUseError, say).
type Error struct {
	Report *Report
}

func (e *Error) Error() string {
	var b strings.Builder
	var names []string
	n := 0
	for _, x := range e.Report.Results {
		for _, m := range x.Errors {
			fmt.Fprintf(&b, "\n\t[ERROR %s]: %s", x.Check, m)
			n++
		}
		if len(x.Errors) > 0 && !slices.Contains(names, x.Check) && Ignorable(x.Check) {
			names = append(names, x.Check)
		}
	}
	head := fmt.Sprintf("preflight: %d errors (nothing on the host was changed):", n)
	if n == 1 {
		head = "preflight: 1 error (nothing on the host was changed):"
	}
	tail := ""
	if len(names) > 0 {
		tail = fmt.Sprintf("\nfix them, or, if you know what you are doing, make a check's errors warnings with --ignore-preflight-errors=%s (or all)", strings.Join(names, ","))
	}
	return head + b.String() + tail
}

// Unwrap is every check's errors, for errors.As.
func (e *Error) Unwrap() []error {
	var out []error
	for _, x := range e.Report.Results {
		out = append(out, x.errs...)
	}
	return out
}

// errorsOf is errs without the nils (a check's helpers return nil for
// what passed).
func errorsOf(errs ...error) []error {
	return slices.DeleteFunc(errs, func(e error) bool { return e == nil })
}

var errNotRegular = errors.New("not a regular file")
