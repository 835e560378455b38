package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// A rolling apply (#25): when --drain must drain the Nodes of several
// partitions whose kubelets restart on fresh state, draining them all
// before the first restart deadlocks a Deployment spread over them under
// a PodDisruptionBudget (its evicted pods have nowhere to go until a
// Node comes back). So apply goes in waves of at most
// nodes.Options.MaxUnavailable partitions: each wave is a transaction of
// its own, to the plan on the way (planner.Between) in which the waves
// so far have their new settings and the rest their old ones: drain the
// wave's Nodes, change the host, wait for them to be Ready, uncordon,
// and only then the next wave. A wave that fails is rolled back alone;
// the waves before it stay applied and recorded, and apply run again
// goes on from there (the Nodes done are no longer affected).

// waves are the partitions of a's Nodes in the order a rolling apply
// takes them, MaxUnavailable at a time; nil, with why when it matters,
// when a goes at once: one wave at most, no --drain, a partition that
// goes, no renderer, or a change that is more than the partitions'
// settings (planner.Between says which).
func (a *attempt) waves() (waves [][]string, why string) {
	o := a.o
	if !o.Nodes.Drain || len(a.targets) < 2 {
		return nil, ""
	}
	per := max(o.Nodes.MaxUnavailable, 1)
	if len(a.targets) <= per {
		return nil, ""
	}
	var names []string
	for _, t := range a.targets {
		if t.Goes() {
			return nil, fmt.Sprintf("the Nodes of %d partitions are drained together, not one at a time: partition %s goes", len(a.targets), t.Name)
		}
		names = append(names, t.Name)
	}
	all := fmt.Sprintf("the Nodes of %d partitions are drained together, not one at a time", len(names))
	if o.WaveBundle == nil {
		return nil, all + ": no renderer for the plans on the way"
	}
	prev, err := a.previousPlan()
	if err != nil {
		return nil, all + ": " + err.Error()
	}
	for len(names) > 0 {
		n := min(per, len(names))
		waves, names = append(waves, names[:n]), names[n:]
	}
	// Every plan on the way must exist and render, or none is applied.
	for i := range waves[:len(waves)-1] {
		if _, err := a.waveBundle(prev, waves, i); err != nil {
			return nil, all + ": " + err.Error()
		}
	}
	return waves, ""
}

// previousPlan is the plan file the host runs: the one the last apply
// installed (bundle.PlanPath, as gathered).
func (a *attempt) previousPlan() ([]byte, error) {
	f, ok := a.cur.Files[bundle.PlanPath]
	if !ok {
		return nil, fmt.Errorf("/%s, the plan the host runs, is missing", bundle.PlanPath)
	}
	return f.Content, nil
}

// waveBundle is the bundle after waves[:i+1]: the partitions of those
// waves and those no wave drains (they change without a drain, in the
// first wave) have their new settings. After the last wave it is the new
// plan's.
func (a *attempt) waveBundle(prev []byte, waves [][]string, i int) (bundle.Bundle, error) {
	taken, drained := slices.Concat(waves[:i+1]...), slices.Concat(waves...)
	b, err := a.o.WaveBundle(prev, func(name string) bool {
		return slices.Contains(taken, name) || !slices.Contains(drained, name)
	})
	if err != nil {
		return bundle.Bundle{}, fmt.Errorf("the host with partitions %s changed: %w", strings.Join(taken, ", "), err)
	}
	return b, nil
}

// applyRolling applies first's plan in waves (under the lock Apply
// holds): one transaction per wave, each gathered anew.
func applyRolling(ctx context.Context, o Options, mode transaction.CgroupMode, first *attempt, waves [][]string, t0 time.Time) (*Report, error) {
	prev, err := first.previousPlan()
	if err != nil {
		return nil, err
	}
	total := &Report{CgroupMode: mode, Steps: []string{}, Warnings: []string{}, Nodes: []nodes.Removal{}, Waves: waves}
	var done []string
	for i, wave := range waves {
		b, err := first.waveBundle(prev, waves, i)
		if err != nil {
			return nil, rollingError(done, wave, total.Generation, err)
		}
		o.Log.Info("rolling apply: next wave", "wave", i+1, "of", len(waves), "partitions", strings.Join(wave, ","))
		a, err := prepare(ctx, o, mode, b)
		if err != nil {
			return nil, rollingError(done, wave, total.Generation, err)
		}
		rep, err := a.run(ctx, time.Now())
		if err != nil {
			return nil, rollingError(done, wave, total.Generation, err)
		}
		total.merge(rep)
		done = append(done, wave...)
	}
	total.Seconds = time.Since(t0).Seconds()
	return total, nil
}

// merge adds one wave's report to a rolling apply's.
func (r *Report) merge(w *Report) {
	r.Changed = r.Changed || w.Changed
	r.Generation = w.Generation
	r.Steps = append(r.Steps, w.Steps...)
	for _, m := range w.Warnings {
		if !slices.Contains(r.Warnings, m) {
			r.Warnings = append(r.Warnings, m)
		}
	}
	r.Shortfalls = append(r.Shortfalls, w.Shortfalls...)
	r.Nodes = append(r.Nodes, w.Nodes...)
}

// rollingError says where a rolling apply stopped: the waves done stay
// applied, the failed one was rolled back.
func rollingError(done, wave []string, generation int, err error) error {
	if len(done) == 0 {
		return fmt.Errorf("rolling apply, partitions %s: %w", strings.Join(wave, ", "), err)
	}
	return fmt.Errorf("rolling apply stopped at partitions %s: %w\n(partitions %s are applied with their new settings, generation %d; apply again goes on from there)",
		strings.Join(wave, ", "), err, strings.Join(done, ", "), generation)
}
