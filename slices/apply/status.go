package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/drift"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/nodeview"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// Health is the overall verdict of status.
type Health string

// Health values; `status` exits 0, 1, 1, 0.
const (
	Healthy    Health = "healthy"
	Degraded   Health = "degraded"
	NotApplied Health = "not-applied"
	// Offline: a root no systemd runs on, read with no problem found in
	// what a tree holds; what only the live host knows was not read
	// (StatusOptions.Offline).
	Offline Health = "offline"
)

// Status is the live state of an applied generation. Its JSON form is the
// output of `status --output json` (docs/apply.md).
type Status struct {
	Health     Health            `json:"health"`
	Generation int               `json:"generation"`
	AppliedAt  time.Time         `json:"appliedAt,omitzero"`
	CgroupMode CgroupMode        `json:"cgroupMode"`
	Host       HostStatus        `json:"host"`
	Partitions []PartitionStatus `json:"partitions"`
	// Problems say why the health is not "healthy"; Drift lists what
	// differs from what was applied (each drift item is also a problem).
	Problems []string `json:"problems"`
	Drift    []string `json:"drift"`
	// Warnings are what does not make the health worse but an operator
	// should act on (a host holding more memory on a partition's nodes
	// than its reservation there, which that partition's kubelet cannot
	// see on cgroup v2).
	Warnings []string `json:"warnings,omitempty"`
	// Offline, when status read a root no systemd runs on, says what it
	// could not read there.
	Offline string `json:"offline,omitempty"`
}

// HostStatus is the host's share.
type HostStatus struct {
	// ReservedCPUs is what the plan reserved; InForce is system.slice's
	// AllowedCPUs as systemd holds it now.
	ReservedCPUs string      `json:"reservedCPUs"`
	InForce      string      `json:"reservedCPUsInForce"`
	Units        []UnitState `json:"units"`
	Nodes        []NodeState `json:"nodes"`
}

// PartitionStatus is one partition.
type PartitionStatus struct {
	Name  string      `json:"name"`
	Slice string      `json:"slice"`
	Units []UnitState `json:"units"`
	// EffectiveCPUs and EffectiveMems are read from the slice's cgroup
	// files (cpuset.cpus.effective on v2, the cpuset v1 group on v1).
	EffectiveCPUs string      `json:"effectiveCPUs"`
	EffectiveMems string      `json:"effectiveMems"`
	Kubelet       Probe       `json:"kubelet"`
	Allocator     Probe       `json:"allocator"`
	Nodes         []NodeState `json:"nodes"`
	// Network is the partition's namespace as it is now (namespace mode).
	Network *NetworkStatus `json:"network,omitempty"`
	// Node is the partition's Kubernetes Node, read from the API server.
	Node NodeStatus `json:"node"`
	// Usage is the partition's CPU time and memory as its kubelet reports
	// them for its Node: on cgroup v1 read in the partition's namespace as
	// kubelet reads them (its slice's CPU time, and the memory of the NUMA
	// nodes it is shown or else its slice's: slices/nodeview); on v2, where
	// kubelet still reads the host's, the slice's own. UsageError says why
	// it was not read.
	Usage      *nodeview.Usage `json:"usage,omitempty"`
	UsageError string          `json:"usageError,omitempty"`
	// Machine is the machine its kubelet is shown, read in the
	// partition's mount namespace (its Node's capacity); MachineError
	// says why it was not read. Neither without a namespace of its own.
	Machine      *nodeview.Machine `json:"machine,omitempty"`
	MachineError string            `json:"machineError,omitempty"`
	// HostMemoryBytes is, on cgroup v2, the memory on the partition's
	// nodes that is neither free, nor hugepages, nor its slice's: the
	// host's and the kernel's, which its kubelet does not count
	// (nodeview.HostMemoryOn). HostMemoryError says why it was not read.
	HostMemoryBytes *uint64 `json:"hostMemoryBytes,omitempty"`
	HostMemoryError string  `json:"hostMemoryError,omitempty"`
}

// NetworkStatus is a partition's network namespace: what was applied and
// what the kernel has.
type NetworkStatus struct {
	Namespace string `json:"namespace"`
	Interface string `json:"interface"`
	// Address is the applied address; Addresses what the interface has.
	Address   string   `json:"address"`
	Present   bool     `json:"present"` // the namespace is mounted
	Up        bool     `json:"up"`      // its interface exists and is up
	Addresses []string `json:"addresses"`
	// Devices are the host's devices applied to the namespace and
	// whether it holds each now.
	Devices []DeviceStatus `json:"devices,omitempty"`
}

// DeviceStatus is a device a partition's namespace should hold.
type DeviceStatus struct {
	Name string `json:"name"`
	PCI  string `json:"pci"`
	// InNamespace: the namespace holds it (else it is on the host, in a
	// pod's namespace, or gone).
	InNamespace bool `json:"inNamespace"`
}

// UnitState is a unit's state.
type UnitState struct {
	Name        string `json:"name"`
	ActiveState string `json:"activeState"`
	SubState    string `json:"subState"`
	Enabled     string `json:"unitFileState"`
	// Usage is a running partition service's own CPU time and memory (its
	// cgroup's, as nodeview reads a slice's): what a partition's kubelet,
	// containerd, allocator and holder cost the host besides its pods.
	// UsageError says why it was not read.
	Usage      *nodeview.Usage `json:"usage,omitempty"`
	UsageError string          `json:"usageError,omitempty"`
}

// Probe is a health check's outcome.
type Probe struct {
	Endpoint string `json:"endpoint,omitempty"`
	OK       bool   `json:"ok"`
	Detail   string `json:"detail"`
}

// NodeState is one NUMA node's memory.
type NodeState struct {
	Node       int              `json:"node"`
	TotalBytes uint64           `json:"totalBytes"`
	FreeBytes  uint64           `json:"freeBytes"`
	Hugepages  []numa.Hugepages `json:"hugepages"`
}

// DefaultProbeTimeout bounds one health check.
const DefaultProbeTimeout = 2 * time.Second

// StatusOptions are status's inputs.
type StatusOptions struct {
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
	// live is read (offline.go).
	Offline bool
}

// ReadStatus reads the live state of the applied generation. Its error is
// for when status itself cannot work (no systemd, unreadable record);
// everything wrong with the host is in Problems.
func ReadStatus(ctx context.Context, o StatusOptions) (*Status, error) {
	o.defaults()
	st := &Status{Partitions: []PartitionStatus{}, Problems: []string{}, Drift: []string{}}
	mode, err := CgroupModeOf(o.Root, o.Offline)
	if err != nil {
		if !o.Offline {
			return nil, err
		}
		mode = "" // offline with nothing applied: not-applied says it all
	}
	st.CgroupMode = mode
	rec, err := ReadRecord(o.Root)
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

func (o *StatusOptions) defaults() {
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
		r.st.Offline = offlineStatusNote
		return nil
	}
	r.checkNodes()
	r.http = &http.Client{Timeout: o.ProbeTimeout, Transport: &http.Transport{DialContext: dialer(o.Root)}}
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

// statusRun is one ReadStatus of an applied host: its options and record,
// what it read, and the Status it fills.
type statusRun struct {
	o     StatusOptions
	rec   *Record
	mode  CgroupMode
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
		b, err := readHostFile(r.o.Root, f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.drift("/%s is missing", f.Path)
		case isReplaced(err):
			// Replaced by something apply did not write: drift, not
			// followed, and the rest of the status still read.
			r.drift("/%s was replaced: %v", f.Path, err)
		case err != nil:
			return fmt.Errorf("reading /%s: %w", f.Path, err)
		case hashOf(b) != f.SHA256:
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
		planned[i] = h.pool(false)
	}
	for _, d := range drift.PoolDifferences(planned, drift.NodePools(topo)) {
		h := HugepageTarget{Node: d.Planned.Node, PageSize: d.Planned.PageSize, Count: d.Planned.Count}
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

// usage reads p's usage as its kubelet reads it: on cgroup v1 the root
// cgroup's in the namespace its holder (when it runs) holds, else the
// slice's.
func (r *statusRun) usage(p RecordPartition, holder systemd.UnitInfo, held bool) (nodeview.Usage, error) {
	if r.mode == CgroupV2 || !held || holder.MainPID == 0 {
		return nodeview.ReadUsage(rootOf(r.o.Root), r.mode == CgroupV2, sliceCgroup(p.Slice))
	}
	ns, err := nodeview.OpenNamespace(rootOf(r.o.Root), holder.MainPID)
	if err != nil {
		return nodeview.Usage{}, err
	}
	defer ns.Close()
	return nodeview.ReadUsage(ns, false, "")
}

// partition is one partition's status: its units, the cpuset in force,
// its nodes, its kubelet, allocator and Node; units marks its units.
func (r *statusRun) partition(ctx context.Context, p RecordPartition, units map[string]bool) PartitionStatus {
	ps := PartitionStatus{Name: p.Name, Slice: p.Slice, Units: []UnitState{}, Nodes: []NodeState{}}
	for _, u := range r.rec.Units {
		if u.Partition == p.Name {
			ps.Units = append(ps.Units, unitState(r.infos[u.Name]))
			units[u.Name] = true
		}
	}
	if r.o.Offline {
		ps.Kubelet, ps.Allocator = Probe{Detail: "offline: not probed"}, Probe{Detail: "offline: not probed"}
		ps.Node = NodeStatus{Name: p.NodeName, Reason: NodeNotChecked, Message: "offline: not read"}
		return ps
	}
	r.unitUsage(ps.Units)
	eff := drift.ReadEffectiveCpuset(rootOf(r.o.Root), r.mode == CgroupV2, p.Slice)
	ps.EffectiveCPUs, ps.EffectiveMems = eff.CPUs, eff.Mems
	holder, held := r.infos[bundle.MountnsUnit(p.Name)]
	if u, err := r.usage(p, holder, held); err != nil {
		ps.UsageError = err.Error()
	} else {
		ps.Usage = &u
	}
	if held {
		if m, err := nodeview.ReadMachine(rootOf(r.o.Root), holder.MainPID); err != nil {
			ps.MachineError = err.Error()
		} else {
			ps.Machine = &m
		}
	}
	if want, ok := recordedSet(r.rec, p.Slice); ok && r.mode == CgroupV2 {
		for _, d := range drift.CpusetDifferences(p.Slice, want.CPUs, want.Mems, drift.Cpuset{CPUs: ps.EffectiveCPUs, Mems: ps.EffectiveMems}) {
			r.drift("%s", d)
		}
	}
	for _, id := range p.Nodes.IDs() {
		if n, ok := r.nodeState(id); ok {
			ps.Nodes = append(ps.Nodes, n)
		}
	}
	if r.mode == CgroupV2 {
		r.hostMemory(p, &ps)
	}
	kubeletHTTP := r.http
	if p.Network != nil {
		ps.Network = r.network(p)
		kubeletHTTP = &http.Client{Timeout: r.o.ProbeTimeout, Transport: &http.Transport{
			DialContext: dialerIn(r.o.Root, path.Join(bundle.NetnsDir, p.Network.Namespace))}}
	}
	if p.KubeletHealthz > 0 {
		ps.Kubelet = probe(ctx, kubeletHTTP, fmt.Sprintf("http://127.0.0.1:%d/healthz", p.KubeletHealthz))
		if !ps.Kubelet.OK {
			r.problem("kubelet of %s: %s", p.Name, ps.Kubelet.Detail)
		}
	} else {
		ps.Kubelet = Probe{Detail: "no healthz port planned"}
	}
	if p.AllocatorSocket != "" {
		ps.Allocator = probeUnix(ctx, r.o.Root, p.AllocatorSocket, r.o.ProbeTimeout)
		if !ps.Allocator.OK {
			r.problem("allocator of %s: %s", p.Name, ps.Allocator.Detail)
		}
	} else {
		ps.Allocator = Probe{OK: true, Detail: "no allocator planned"}
	}
	req := planNode(p, r.o.NoAPI, r.o.Kubeconfig)
	ps.Node = req.Status
	if req.Read {
		n, err := readNode(ctx, r.o, req, r.admin)
		ps.Node = nodeResult(req.Status, n, err)
	}
	if msg := nodeProblem(p.Name, ps.Node, ps.Kubelet); msg != "" {
		r.problem("%s", msg)
	}
	if p.Network != nil && ps.Node.InternalIP != "" && ps.Node.InternalIP != p.Network.Address.Addr().String() {
		r.problem("Node %s advertises InternalIP %s, but partition %s's address is %s (is another kubelet using its name?)",
			ps.Node.Name, ps.Node.InternalIP, p.Name, p.Network.Address.Addr())
	}
	return ps
}

// hostMemory measures the host's memory on p's nodes (cgroup v2) and
// warns when it is more than the host's reservation there, which p's
// kubelet counts on instead (its eviction threshold: the kernel's OOM
// killer would come before kubelet's eviction).
func (r *statusRun) hostMemory(p RecordPartition, ps *PartitionStatus) {
	if len(ps.Nodes) != p.Nodes.Len() {
		ps.HostMemoryError = "the NUMA nodes' memory was not read"
		return
	}
	charged, err := nodeview.ReadSliceNodeMemory(rootOf(r.o.Root), sliceCgroup(p.Slice))
	if err != nil {
		ps.HostMemoryError = err.Error()
		return
	}
	var nodes []nodeview.NodeUse
	for _, n := range ps.Nodes {
		u := nodeview.NodeUse{Node: n.Node, TotalBytes: n.TotalBytes, FreeBytes: n.FreeBytes}
		for _, h := range n.Hugepages {
			u.HugeBytes += h.Total * h.PageSize
		}
		nodes = append(nodes, u)
	}
	host := nodeview.HostMemoryOn(nodes, charged)
	ps.HostMemoryBytes = &host
	if reserved := p.HostMemoryReserved; reserved != nil && host > *reserved {
		r.warn("partition %s: the host holds %s on its NUMA nodes %s, more than its reservation there (%s); its kubelet does not count the host's memory (cgroup v2), so the kernel's OOM killer may come before kubelet's eviction: raise system_reserved_memory for %s, or move host work off those nodes",
			p.Name, units.FormatBytes(host), p.Nodes, units.FormatBytes(*reserved), p.Name)
	}
}

// unitUsage reads each running service's own usage from its cgroup.
func (r *statusRun) unitUsage(units []UnitState) {
	for i := range units {
		info := r.infos[units[i].Name]
		if info.ActiveState != "active" || info.MainPID == 0 || info.ControlGroup == "" {
			continue
		}
		if u, err := nodeview.ReadUsage(rootOf(r.o.Root), r.mode == CgroupV2, info.ControlGroup); err != nil {
			units[i].UsageError = err.Error()
		} else {
			units[i].Usage = &u
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "not installed"
	}
	return s
}

func unitState(u systemd.UnitInfo) UnitState {
	return UnitState{Name: u.Name, ActiveState: u.ActiveState, SubState: u.SubState, Enabled: u.UnitFileState}
}

func recordedSet(r *Record, unit string) (SliceSet, bool) {
	for _, s := range r.Slices {
		if s.Unit == unit {
			return s, true
		}
	}
	return SliceSet{}, false
}

// probe GETs a kubelet healthz endpoint: 200 with body "ok" is healthy.
func probe(ctx context.Context, c *http.Client, url string) Probe {
	p := Probe{Endpoint: url}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		p.Detail = err.Error()
		return p
	}
	resp, err := c.Do(req)
	if err != nil {
		p.Detail = "unreachable: " + err.Error()
		return p
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	text := strings.TrimSpace(string(body))
	p.OK = resp.StatusCode == http.StatusOK && text == "ok"
	p.Detail = fmt.Sprintf("HTTP %d %q", resp.StatusCode, text)
	return p
}

// probeUnix asks the allocator's /v1/healthz over its Unix socket, with
// the daemon's own client.
func probeUnix(ctx context.Context, root, socket string, timeout time.Duration) Probe {
	p := Probe{Endpoint: "unix:" + socket}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sock, done, err := rootOf(root).SocketPath(socket)
	if err != nil {
		p.Detail = err.Error()
		return p
	}
	defer done()
	h, err := daemonapi.Client{Socket: sock}.Health(ctx)
	var apiErr *daemonapi.APIError
	switch {
	case errors.As(err, &apiErr):
		p.Detail = fmt.Sprintf("HTTP %d status %q: %s", apiErr.Status, h.Status, apiErr.ErrorResponse.Error)
	case err != nil:
		p.Detail = "unreachable: " + err.Error()
	default:
		p.OK = h.Status == "ok"
		p.Detail = fmt.Sprintf("HTTP 200 status %q", h.Status)
	}
	return p
}
