package status

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"time"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/drift"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// offlineNote says what an offline status did not read (a root no
// systemd runs on: an image, a chroot, a copy of a host, #26): status
// then calls the host "offline", never healthy.
const offlineNote = "offline (no systemd runs for this root): unit states, cpusets in force, kubelet and allocator health, network namespaces and Nodes are not read"

// DefaultProbeTimeout bounds one health check.
const DefaultProbeTimeout = 2 * time.Second

// Options are status's inputs.
type Options struct {
	Root    string
	Sysfs   string
	Systemd systemd.Manager
	// ProbeTimeout bounds each health check, the API server's included.
	ProbeTimeout time.Duration
	// Kubeconfig, when set, is the kubeconfig (on this machine, not below
	// Root) every partition's Node is read with; else each partition's own
	// kubelet kubeconfig is, below Root.
	Kubeconfig string
	// NoAPI skips reading the Nodes from the API server.
	NoAPI bool
	// Offline: Root is a tree no systemd runs on (Systemd is a
	// systemd.Offline): the record and the files are checked, nothing
	// live is read (offlineNote).
	Offline bool
}

// Read reads the live state of the applied generation. Its error is
// for when status itself cannot work (no systemd, unreadable record);
// everything wrong with the host is in Problems.
func Read(ctx context.Context, o Options) (*Status, error) {
	o.defaults()
	st := &Status{Partitions: []PartitionStatus{}, Problems: []string{}, Drift: []string{}}
	mode, err := record.CgroupModeOf(o.Root, o.Offline)
	if err != nil {
		if !o.Offline {
			return nil, err
		}
		mode = "" // offline with nothing applied: not-applied says it all
	}
	st.CgroupMode = mode
	rec, err := record.Read(o.Root)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		st.Health = NotApplied
		st.Problems = append(st.Problems, "nothing applied on this host (numa-partition apply)")
		return st, nil
	}
	st.Generation, st.AppliedAt = rec.Generation, rec.AppliedAt
	st.Host.ReservedCPUs = rec.ReservedCPUs.String()
	r := &statusRun{o: o, rec: rec, mode: mode, st: st}
	r.recordProblems()
	if err := r.checkFiles(); err != nil {
		return nil, err
	}
	if err := r.checkUnits(ctx); err != nil {
		return nil, err
	}
	if err := r.connect(); err != nil {
		return nil, err
	}
	if r.admin != nil {
		defer r.admin.Close()
	}
	r.readPartitions(ctx)
	st.Health = Healthy
	if o.Offline {
		st.Health = Offline // never healthy: the live host was not read
	}
	if len(st.Problems) > 0 {
		st.Health = Degraded
	}
	return st, nil
}

func (o *Options) defaults() {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Sysfs == "" {
		o.Sysfs = filepath.Join(o.Root, "sys")
	}
	if o.ProbeTimeout == 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
}

// recordProblems are what the record says an interrupted command left,
// and a cgroup mode that changed under it.
func (r *statusRun) recordProblems() {
	rec := r.rec
	if rec.Pending {
		r.problem("an apply of generation %d was interrupted (killed before it finished, or its rollback was incomplete): run numa-partition apply to finish it, or remove to undo it", rec.Generation)
	}
	for _, c := range rec.Cordoned {
		r.problem("an interrupted drain left Node %s cordoned (partition %s): the next apply uncordons it once Ready, or kubectl uncordon %s", c.Node, c.Partition, c.Node)
	}
	if r.mode != rec.CgroupMode {
		r.drift("cgroup mode is %s, applied on %s", r.mode, rec.CgroupMode)
	}
}

// connect readies what the live checks ask: the NUMA nodes, the probes'
// HTTP client and, with a kubeconfig of the admin's, the API server.
// Offline, nothing is asked.
func (r *statusRun) connect() error {
	o := r.o
	if o.Offline {
		r.st.Offline = offlineNote
		return nil
	}
	r.checkNodes()
	r.http = &http.Client{Timeout: o.ProbeTimeout, Transport: &http.Transport{DialContext: host.Dialer(o.Root)}}
	if o.Kubeconfig == "" || o.NoAPI {
		return nil
	}
	// The admin's kubeconfig is status's own input: unusable, it is
	// status failing, not the host.
	cfg, err := kubeapi.Load("/", o.Kubeconfig)
	if err != nil {
		return err
	}
	r.admin = kubeapi.NewClient(cfg, kubeapi.Options{Timeout: o.ProbeTimeout})
	return nil
}

// readPartitions fills each partition's status, then the host's units
// (those of no partition) and NUMA nodes.
func (r *statusRun) readPartitions(ctx context.Context) {
	st := r.st
	partUnits := map[string]bool{}
	for _, p := range r.rec.Partitions {
		st.Partitions = append(st.Partitions, r.partition(ctx, p, partUnits))
	}
	for _, u := range r.rec.Units {
		if !partUnits[u.Name] {
			st.Host.Units = append(st.Host.Units, unitState(r.infos[u.Name]))
		}
	}
	if r.topo != nil {
		for _, n := range r.topo.Nodes {
			ns, _ := r.nodeState(n.ID)
			st.Host.Nodes = append(st.Host.Nodes, ns)
		}
	}
}

// statusRun is one Read of an applied host: its options and record,
// what it read, and the Status it fills.
type statusRun struct {
	o     Options
	rec   *record.Record
	mode  cgroupmode.Mode
	st    *Status
	infos map[string]systemd.UnitInfo // the record's units, over D-Bus
	topo  *numa.Topology              // nil when sysfs could not be read
	http  *http.Client                // kubelet healthz probes
	admin *kubeapi.Client             // Nodes with the admin's kubeconfig; nil without
}

func (r *statusRun) problem(format string, a ...any) {
	r.st.Problems = append(r.st.Problems, fmt.Sprintf(format, a...))
}

func (r *statusRun) warn(format string, a ...any) {
	r.st.Warnings = append(r.st.Warnings, fmt.Sprintf(format, a...))
}

// drift is a problem that is a difference from what apply left.
func (r *statusRun) drift(format string, a ...any) {
	d := fmt.Sprintf(format, a...)
	r.st.Drift = append(r.st.Drift, d)
	r.st.Problems = append(r.st.Problems, "drift: "+d)
}

// checkFiles compares the recorded files with the disk.
func (r *statusRun) checkFiles() error {
	for _, f := range r.rec.Files {
		b, err := host.ReadFile(r.o.Root, f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.drift("/%s is missing", f.Path)
		case host.IsReplaced(err):
			// Replaced by something apply did not write: drift, not
			// followed, and the rest of the status still read.
			r.drift("/%s was replaced: %v", f.Path, err)
		case err != nil:
			return fmt.Errorf("reading /%s: %w", f.Path, err)
		case record.Hash(b) != f.SHA256:
			r.drift("/%s was changed after apply", f.Path)
		}
	}
	return nil
}

// checkUnits reads the recorded units over D-Bus: their states and the
// slices' cpusets.
func (r *statusRun) checkUnits(ctx context.Context) error {
	r.infos = map[string]systemd.UnitInfo{}
	for _, u := range r.rec.Units {
		info, err := r.o.Systemd.Unit(ctx, u.Name)
		if err != nil {
			return err
		}
		r.infos[u.Name] = info
		if u.Start && !info.Active() && !r.o.Offline {
			r.problem("%s is %s/%s", u.Name, info.ActiveState, info.SubState)
		}
		if u.Enable && !info.Enabled() {
			r.drift("%s is %s, applied enabled", u.Name, orNone(info.UnitFileState))
		}
	}
	if r.o.Offline {
		return nil // states, cpusets in force: only a running systemd knows
	}
	for _, s := range r.rec.Slices {
		info := r.infos[s.Unit]
		if !info.AllowedCPUs.Equal(s.CPUs) || info.AllowedMemoryNodes != s.Mems {
			r.drift("%s has AllowedCPUs=%s AllowedMemoryNodes=%s, applied %s and %s",
				s.Unit, info.AllowedCPUs, info.AllowedMemoryNodes, s.CPUs, s.Mems)
		}
	}
	if sys, ok := r.infos["system.slice"]; ok {
		r.st.Host.InForce = sys.AllowedCPUs.String()
	} else if sys, err := r.o.Systemd.Unit(ctx, "system.slice"); err == nil {
		r.st.Host.InForce = sys.AllowedCPUs.String()
	}
	return nil
}

// checkNodes reads the NUMA nodes from sysfs and compares the pools.
func (r *statusRun) checkNodes() {
	topo, err := numa.NewFS(r.o.Sysfs).Discover()
	if err != nil {
		r.problem("reading NUMA nodes from %s: %v", r.o.Sysfs, err)
		return
	}
	r.topo = topo
	planned := make([]hugepool.Pool, len(r.rec.Hugepages))
	for i, h := range r.rec.Hugepages {
		planned[i] = h.Pool(false)
	}
	for _, d := range drift.PoolDifferences(planned, drift.NodePools(topo)) {
		h := record.HugepageTarget{Node: d.Planned.Node, PageSize: d.Planned.PageSize, Count: d.Planned.Count}
		r.drift("%s: %d pages now", h, d.Now)
	}
}

func (r *statusRun) nodeState(id int) (NodeState, bool) {
	if r.topo == nil {
		return NodeState{}, false
	}
	n, ok := r.topo.Node(id)
	if !ok {
		return NodeState{}, false
	}
	return NodeState{Node: id, TotalBytes: n.MemoryBytes, FreeBytes: n.FreeBytes, Hugepages: n.Hugepages}, true
}
