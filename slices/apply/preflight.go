package apply

import (
	"fmt"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/preflight"
)

// PortInUseError is a planned port another process already listens on
// (the preflight's Port check).
type PortInUseError = preflight.PortInUseError

// preflight runs the preflight checks of bundle b on the host
// (slices/preflight), before apply changes anything: their errors stop
// apply (a *preflight.Error), and a dry run lists them and goes on, but
// for the cgroup mode, which NewDesired refuses anyway (listed once, by
// the preflight).
func (o Options) preflight(mode transaction.CgroupMode, b bundle.Bundle) (*preflight.Report, error) {
	prev, err := record.Read(o.Root)
	if err != nil {
		return nil, err
	}
	own := map[string]bool{}
	if prev != nil {
		for _, u := range prev.Units {
			own[u.Name] = true
		}
	}
	checks, err := preflight.Checks(preflight.Input{Root: o.Root, Bundle: b, Mode: mode, Offline: o.Offline, Own: own})
	if err != nil {
		return nil, err
	}
	rep := preflight.Run(checks, o.IgnorePreflightErrors)
	err = rep.Err()
	if err != nil && (!o.DryRun || failed(rep, preflight.NameCgroupMode)) {
		// No report to carry the warnings: they are logged.
		for _, w := range rep.Warnings() {
			o.Log.Warn(w)
		}
		return rep, err
	}
	return rep, nil
}

// failed says whether check has errors in rep.
func failed(rep *preflight.Report, check string) bool {
	for _, r := range rep.Results {
		if r.Check == check && r.Status == preflight.StatusError {
			return true
		}
	}
	return false
}

// addPreflight puts the preflight's results into the report: its
// warnings, and in a dry run its errors as what apply would refuse.
func (r *Report) addPreflight(pre *preflight.Report) {
	r.Preflight = pre
	var ws []string
	for _, x := range pre.Results {
		for _, e := range x.Errors {
			ws = append(ws, fmt.Sprintf("apply would refuse: preflight [ERROR %s]: %s", x.Check, e))
		}
	}
	r.Warnings = append(append(ws, pre.Warnings()...), r.Warnings...)
}
