package apply

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/preflight"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// Options are apply's inputs besides the plan and the bundle.
type Options struct {
	Root    string // "/" on a host; a sandbox's root in tests
	Sysfs   string // hugepage pools; "/sys" on a host
	Systemd systemd.Manager
	DryRun  bool
	// Offline: Root is a tree no systemd runs on (Systemd is a
	// systemd.Offline). Only a dry run then: unit states are unknown, the
	// API server and the kernel's namespaces are not asked (offline.go).
	Offline bool
	Version string
	// CgroupMode overrides detection (--cgroup-mode; tests).
	CgroupMode transaction.CgroupMode
	BeforeStep func(i int, s transaction.Step) error
	// PoolWriter writes a hugepage pool's nr_hugepages (hugepool.Write;
	// tests play a kernel that falls short).
	PoolWriter hugepool.Writer
	// ResetKubeletState lets apply restart a kubelet whose managers'
	// settings change on fresh state even while pods hold exclusive CPUs
	// or pinned memory in it (kubelet then forgets them); without it
	// apply refuses and says to drain the Node first.
	ResetKubeletState bool
	// Nodes is what remove and apply do with the partitions' Kubernetes
	// Nodes they disrupt (package nodes).
	Nodes nodes.Options
	// IgnorePreflightErrors are the preflight checks whose errors are
	// warnings (--ignore-preflight-errors).
	IgnorePreflightErrors preflight.Ignore
	// WaveBundle is, for a rolling apply (rolling.go), the bundle of the
	// host on the way: previous is the plan file the host runs
	// (bundle.PlanPath, as gathered), and the partitions take names have
	// their new settings, the others still previous's. The caller makes
	// it from its plan and its renderer (planner.Between, then render):
	// apply reads bundles only. Without it, apply drains every Node it
	// disrupts before it changes the host.
	WaveBundle func(previous []byte, take func(partition string) bool) (bundle.Bundle, error)
	Log        *slog.Logger
	Now        func() time.Time

	// events records on the partitions' Nodes (nodes.NewEvents); set by Apply
	// and Remove, shared by a rolling apply's waves; nil records nothing.
	events *kubeapi.EventRecorder
}

// Report is what an apply did (or, with DryRun, would do). Its JSON form
// is the output of `apply --output json`.
type Report struct {
	DryRun bool `json:"dryRun"`
	// Offline: a dry run of a root no systemd runs on (Options.Offline).
	Offline    bool                    `json:"offline,omitempty"`
	Changed    bool                    `json:"changed"`
	Generation int                     `json:"generation"`
	CgroupMode transaction.CgroupMode  `json:"cgroupMode"`
	Steps      []string                `json:"steps"`
	Diff       string                  `json:"diff,omitempty"`
	Warnings   []string                `json:"warnings"`
	Shortfalls []transaction.Shortfall `json:"hugepageShortfalls,omitempty"`
	// Nodes are the partitions' Nodes this apply disrupts (affectedNodes):
	// with --drain, drained first; after the steps deleted (a partition
	// that goes) or uncordoned (a kubelet back on fresh state).
	Nodes []nodes.Removal `json:"nodes"`
	// Waves are, for a rolling apply (rolling.go), the partitions whose
	// Nodes were drained, changed and let back in together, in order.
	Waves   [][]string `json:"waves,omitempty"`
	Seconds float64    `json:"seconds"`
	// Preflight are the preflight checks' results (slices/preflight):
	// their errors stop apply before it changes anything, a dry run lists
	// them (and its warnings say apply would refuse).
	Preflight *preflight.Report `json:"preflight,omitempty"`
}

func (o *Options) defaults() {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Sysfs == "" {
		o.Sysfs = filepath.Join(o.Root, "sys")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.PoolWriter == nil {
		o.PoolWriter = hugepool.Write
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Apply brings the host to bundle b, transactionally: it runs the
// preflight checks (slices/preflight: binaries, CA, kubeconfig, CNI
// plugins, ports, swap, cgroup driver and mode), whose errors refuse
// before anything changes; then, under the apply lock, it gathers the
// host's state, plans the steps, and runs them (package transaction),
// rolling everything back on the first failure (the error is then a
// *transaction.StepError). The bundle is all it reads of the plan.
func Apply(ctx context.Context, o Options, b bundle.Bundle) (*Report, error) {
	t0 := time.Now()
	o.defaults()
	if err := o.offlineDryRun(); err != nil {
		return nil, err
	}
	mode, err := o.cgroupMode()
	if err != nil {
		return nil, err
	}
	// Before anything changes on the host, the lock file included: the
	// preflight, which only reads.
	pre, err := o.preflight(mode, b)
	if err != nil {
		return nil, err
	}
	if !o.DryRun {
		lock, err := AcquireLock(o.Root)
		if err != nil {
			return nil, err
		}
		defer lock.Release()
	}
	o.events = o.newEvents(b.Hostname)
	a, err := prepare(ctx, o, mode, b)
	if err != nil {
		return nil, err
	}
	waves, why := a.waves()
	var rep *Report
	if len(waves) > 1 && !o.DryRun {
		rep, err = applyRolling(ctx, o, mode, a, waves, t0)
	} else {
		if len(waves) > 1 {
			a.rep.Waves = waves
		} else if why != "" {
			a.rep.Warnings = append(a.rep.Warnings, why)
		}
		rep, err = a.run(ctx, t0)
	}
	if err != nil {
		return nil, err
	}
	rep.addPreflight(pre)
	return rep, nil
}

// attempt is one transaction of apply: the host's state gathered, the
// steps and the Nodes they disrupt decided, nothing changed yet.
type attempt struct {
	o       Options
	d       transaction.Desired
	prev    *record.Record
	cur     transaction.Current
	steps   []transaction.Step
	targets []nodes.Target
	rep     *Report
}

// prepare gathers the host's state and decides the steps of bringing it
// to bundle b, and the Nodes they disrupt; it changes nothing but the
// temporary files an interrupted apply left.
func prepare(ctx context.Context, o Options, mode transaction.CgroupMode, b bundle.Bundle) (*attempt, error) {
	rep := &Report{DryRun: o.DryRun, CgroupMode: mode, Steps: []string{}, Warnings: []string{}, Nodes: []nodes.Removal{}}
	if w := transaction.CgroupWarning(mode); w != "" {
		rep.Warnings = append(rep.Warnings, w)
		o.Log.Warn(w)
	}
	d, err := transaction.NewDesired(b, mode)
	if err != nil {
		return nil, err
	}
	prev, err := record.Read(o.Root)
	if err != nil {
		return nil, err
	}
	if !o.DryRun {
		// A kill during a write (#24 item 18) left its temporary file.
		swept, err := transaction.SweepTemps(o.Root, transaction.OwnPaths(transaction.DesiredPaths(d), d.Units, prev))
		for _, p := range swept {
			o.Log.Info("removed the temporary file of an interrupted write", "path", p)
		}
		if err != nil {
			return nil, fmt.Errorf("removing what an interrupted apply left: %w", err)
		}
	}
	cur, err := transaction.Gather(ctx, o.Root, o.Sysfs, o.Systemd, d, prev, o.Offline)
	if err != nil {
		return nil, err
	}
	steps := transaction.Plan(d, cur)
	// Which Nodes this apply disrupts is decided before anything changes,
	// from the plan and the host alone (affectedNodes).
	targets := affectedNodes(d, cur, steps, transaction.RecordPartitions(d), o.ResetKubeletState)
	if err := transaction.CheckKubeletStates(d, cur, o.ResetKubeletState || o.Nodes.Drain); err != nil {
		if !o.DryRun {
			return nil, err
		}
		rep.Warnings = append(rep.Warnings, "apply would refuse: "+err.Error())
	}
	if !o.Nodes.Drain {
		// Without --drain a kubelet with pinned pods was refused above
		// (or --reset-kubelet-state keeps them running), and pods a
		// restart re-creates are said to be; only the Nodes of
		// partitions that go are checked, as plain remove does.
		for _, t := range targets {
			if t.Reason == nodes.ReasonNamespaceRebuilt {
				rep.Warnings = append(rep.Warnings, rebuiltWarning(t))
			}
		}
		targets = slices.DeleteFunc(targets, func(t nodes.Target) bool { return !t.Goes() })
	}
	rep.Changed = len(steps) > 0
	for _, s := range steps {
		rep.Steps = append(rep.Steps, s.String())
	}
	rep.Generation = 0
	if prev != nil {
		rep.Generation = prev.Generation
	}
	return &attempt{o: o, d: d, prev: prev, cur: cur, steps: steps, targets: targets, rep: rep}, nil
}
