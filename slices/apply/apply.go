package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/apply/record"
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
	CgroupMode CgroupMode
	BeforeStep func(i int, s Step) error
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
	Offline    bool        `json:"offline,omitempty"`
	Changed    bool        `json:"changed"`
	Generation int         `json:"generation"`
	CgroupMode CgroupMode  `json:"cgroupMode"`
	Steps      []string    `json:"steps"`
	Diff       string      `json:"diff,omitempty"`
	Warnings   []string    `json:"warnings"`
	Shortfalls []Shortfall `json:"hugepageShortfalls,omitempty"`
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
// host's state, plans the steps, and runs them, rolling everything back on
// the first failure (the error is then a *StepError). The bundle is all
// it reads of the plan.
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
	d       Desired
	prev    *record.Record
	cur     Current
	steps   []Step
	targets []nodes.Target
	rep     *Report
}

// prepare gathers the host's state and decides the steps of bringing it
// to bundle b, and the Nodes they disrupt; it changes nothing but the
// temporary files an interrupted apply left.
func prepare(ctx context.Context, o Options, mode CgroupMode, b bundle.Bundle) (*attempt, error) {
	rep := &Report{DryRun: o.DryRun, CgroupMode: mode, Steps: []string{}, Warnings: []string{}, Nodes: []nodes.Removal{}}
	if w := CgroupWarning(mode); w != "" {
		rep.Warnings = append(rep.Warnings, w)
		o.Log.Warn(w)
	}
	d, err := NewDesired(b, mode)
	if err != nil {
		return nil, err
	}
	prev, err := record.Read(o.Root)
	if err != nil {
		return nil, err
	}
	if !o.DryRun {
		// A kill during a write (#24 item 18) left its temporary file.
		swept, err := sweepTemps(o.Root, ownPaths(desiredPaths(d), d.Units, prev))
		for _, p := range swept {
			o.Log.Info("removed the temporary file of an interrupted write", "path", p)
		}
		if err != nil {
			return nil, fmt.Errorf("removing what an interrupted apply left: %w", err)
		}
	}
	cur, err := Gather(ctx, o.Root, o.Sysfs, o.Systemd, d, prev, o.Offline)
	if err != nil {
		return nil, err
	}
	steps := Plan(d, cur)
	// Which Nodes this apply disrupts is decided before anything changes,
	// from the plan and the host alone (affectedNodes).
	targets := affectedNodes(d, cur, steps, recordPartitions(d), o.ResetKubeletState)
	if err := checkKubeletStates(d, cur, o.ResetKubeletState || o.Nodes.Drain); err != nil {
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

// gatherFiles reads the files at every desired and recorded path (a
// missing one is absent from the map).
func gatherFiles(root string, d Desired, prev *record.Record) (map[string]FileState, error) {
	paths := map[string]bool{}
	for _, f := range d.Files {
		paths[f.Path] = true
	}
	if prev != nil {
		for _, f := range prev.Files {
			paths[f.Path] = true
		}
	}
	files := map[string]FileState{}
	for p := range paths {
		fs, ok, err := host.ReadFileState(root, p)
		if err != nil {
			return nil, fmt.Errorf("reading the host: %w", err)
		}
		if ok {
			files[p] = fs
		}
	}
	return files, nil
}

// Gather reads what Plan compares against: the files at every desired and
// recorded path, the state of every desired and recorded unit, and the
// hugepage pools.
//
// offline (a root no systemd runs on), the kernel's network namespaces
// are not read: no device is known to be stranded in a stale one.
func Gather(ctx context.Context, root, sysfs string, m systemd.Manager, d Desired, prev *record.Record, offline bool) (Current, error) {
	c := Current{Units: map[string]systemd.UnitInfo{}, Hugepages: map[HugepageKey]uint64{}, Record: prev}
	var err error
	if c.Files, err = gatherFiles(root, d, prev); err != nil {
		return c, err
	}
	if c.KubeletStates, err = gatherKubeletState(root, d); err != nil {
		return c, err
	}
	names := map[string]bool{}
	for _, u := range d.Units {
		names[u.Name] = true
	}
	if prev != nil {
		for _, u := range prev.Units {
			names[u.Name] = true
		}
	}
	for n := range names {
		u, err := m.Unit(ctx, n)
		if err != nil {
			return c, fmt.Errorf("reading the host: %w", err)
		}
		c.Units[n] = u
	}
	if prev != nil {
		planned := map[string]bool{}
		for _, s := range d.Slices {
			planned[s.Unit] = true
		}
		for _, s := range prev.Slices {
			if !planned[s.Unit] && len(sliceLeftovers(root, prev.CgroupMode, s.Unit)) > 0 {
				c.StaleSlices = append(c.StaleSlices, s.Unit)
			}
		}
	}
	if !offline {
		if c.StaleNetwork, err = staleNetwork(root, prev, d); err != nil {
			return c, err
		}
	}
	if d.CgroupMode != CgroupV2 {
		c.CPUSetsV1 = map[string]string{}
		for _, u := range d.Units {
			if u.Partition == "" || !strings.HasSuffix(u.Name, ".slice") {
				continue
			}
			g := cpusetV1Group(root, sliceCgroup(u.Name))
			if !g.exists() {
				continue
			}
			cpus, err := g.read("cpuset.cpus")
			if err != nil {
				return c, fmt.Errorf("reading the host: %w", err)
			}
			mems, err := g.read("cpuset.mems")
			if err != nil {
				return c, fmt.Errorf("reading the host: %w", err)
			}
			c.CPUSetsV1[u.Name] = cpus + "/" + mems
		}
	}
	for _, h := range d.Hugepages {
		p := hugepool.Path(sysfs, h.Node, h.PageSize)
		n, err := hugepool.Read(p)
		if errors.Is(err, fs.ErrNotExist) {
			return c, fmt.Errorf("the plan wants %s, but %s does not exist: no such node or page size on this host", h, p)
		}
		if err != nil {
			return c, fmt.Errorf("reading the host: %w", err)
		}
		c.Hugepages[HugepageKey{h.Node, h.PageSize}] = n
	}
	return c, nil
}

func newRecord(o Options, d Desired, cur Current, prev *record.Record, mode CgroupMode) *record.Record {
	r := &record.Record{Generation: 1, AppliedAt: o.Now().UTC(), Version: o.Version, CgroupMode: mode,
		Units: d.Units, Slices: d.Slices, Files: []record.File{}, Hugepages: []record.HugepageTarget{}}
	r.Dirs = []string{}
	r.Network = recordNetwork(d.Network)
	if prev != nil {
		r.Generation = prev.Generation + 1
		r.Dirs = append(r.Dirs, prev.Dirs...)
	}
	for _, f := range d.Files {
		rf := record.File{Path: f.Path, SHA256: record.Hash(f.Content), Mode: f.Mode.Perm()}
		if pf, ours := prev.File(f.Path); ours {
			rf.Original = pf.Original
		} else if _, existed := cur.Files[f.Path]; existed {
			rf.Original = true
		}
		r.Files = append(r.Files, rf)
	}
	for _, h := range d.Hugepages {
		h.Before = cur.Hugepages[HugepageKey{h.Node, h.PageSize}]
		if prev != nil {
			for _, ph := range prev.Hugepages {
				if ph.Node == h.Node && ph.PageSize == h.PageSize {
					h.Before = ph.Before
				}
			}
		}
		r.Hugepages = append(r.Hugepages, h)
	}
	r.Hostname = d.Hostname
	r.ReservedCPUs = d.ReservedCPUs
	r.Partitions = recordPartitions(d)
	return r
}

// recordPartitions are the bundle's partitions as the record keeps them;
// for a bundle without them (made by hand, in tests), those of d's
// slices.
func recordPartitions(d Desired) []record.Partition {
	if len(d.Partitions) > 0 {
		return slices.Clone(d.Partitions)
	}
	out := []record.Partition{}
	for _, u := range d.Units {
		if u.Partition != "" && strings.HasSuffix(u.Name, ".slice") {
			out = append(out, record.Partition{Name: u.Partition, Slice: u.Name})
		}
	}
	return out
}

// Diff is the unified diff of the file steps: what --dry-run prints.
// diffLines splits content into lines for a unified diff, each with its
// newline. Not difflib.SplitLines: it adds a line after the last newline,
// so a new file's hunk started "@@ -1 +1,45 @@" with a blank context line
// and every file got a blank last line, which `git apply` rejects.
func diffLines(content []byte) []string {
	if len(content) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(content), "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n" // the last line has none: diffed as if it had
	return lines
}

func Diff(steps []Step, cur Current) string {
	var b strings.Builder
	for _, st := range steps {
		s, removed, ok := st.fileChange()
		if !ok {
			continue
		}
		old := cur.Files[s.Path]
		ud := difflib.UnifiedDiff{
			A: diffLines(old.Content), B: diffLines(s.Content),
			FromFile: "a/" + s.Path, ToFile: "b/" + s.Path, Context: 3,
		}
		if _, ok := cur.Files[s.Path]; !ok {
			ud.FromFile = "/dev/null"
		}
		if removed {
			ud.ToFile = "/dev/null"
		}
		text, err := difflib.GetUnifiedDiffString(ud)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", s.Path, err)
			continue
		}
		if text == "" { // same content, other mode
			fmt.Fprintf(&b, "mode change /%s: %s -> %s\n", s.Path, old.Mode.Perm(), s.Mode.Perm())
		}
		b.WriteString(text)
	}
	return b.String()
}
