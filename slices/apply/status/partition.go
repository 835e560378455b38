package status

import (
	"context"
	"fmt"
	"net/http"
	"path"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/drift"
	"github.com/numa-partition/numa-partition/slices/nodeview"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// usage reads p's usage as its kubelet reads it: on cgroup v1 the root
// cgroup's in the namespace its holder (when it runs) holds, else the
// slice's.
func (r *statusRun) usage(p record.Partition, holder systemd.UnitInfo, held bool) (nodeview.Usage, error) {
	if r.mode == cgroupmode.V2 || !held || holder.MainPID == 0 {
		return nodeview.ReadUsage(host.Root(r.o.Root), r.mode == cgroupmode.V2, drift.SliceCgroup(p.Slice))
	}
	ns, err := nodeview.OpenNamespace(host.Root(r.o.Root), holder.MainPID)
	if err != nil {
		return nodeview.Usage{}, err
	}
	defer ns.Close()
	return nodeview.ReadUsage(ns, false, "")
}

// partition is one partition's status: its units, the cpuset in force,
// its nodes, its kubelet, allocator and Node; units marks its units.
func (r *statusRun) partition(ctx context.Context, p record.Partition, units map[string]bool) PartitionStatus {
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
	r.daemons(p, &ps)
	eff := drift.ReadEffectiveCpuset(host.Root(r.o.Root), r.mode == cgroupmode.V2, p.Slice)
	ps.EffectiveCPUs, ps.EffectiveMems = eff.CPUs, eff.Mems
	holder, held := r.infos[bundle.MountnsUnit(p.Name)]
	if u, err := r.usage(p, holder, held); err != nil {
		ps.UsageError = err.Error()
	} else {
		ps.Usage = &u
	}
	if held {
		if m, err := nodeview.ReadMachine(host.Root(r.o.Root), holder.MainPID); err != nil {
			ps.MachineError = err.Error()
		} else {
			ps.Machine = &m
		}
	}
	if want, ok := recordedSet(r.rec, p.Slice); ok && r.mode == cgroupmode.V2 {
		for _, d := range drift.CpusetDifferences(p.Slice, want.CPUs, want.Mems, drift.Cpuset{CPUs: ps.EffectiveCPUs, Mems: ps.EffectiveMems}) {
			r.drift("%s", d)
		}
	}
	for _, id := range p.Nodes.IDs() {
		if n, ok := r.nodeState(id); ok {
			ps.Nodes = append(ps.Nodes, n)
		}
	}
	if r.mode == cgroupmode.V2 {
		r.hostMemory(p, &ps)
	}
	kubeletHTTP := r.http
	if p.Network != nil {
		ps.Network = r.network(p)
		kubeletHTTP = &http.Client{Timeout: r.o.ProbeTimeout, Transport: &http.Transport{
			DialContext: host.DialerIn(r.o.Root, path.Join(bundle.NetnsDir, p.Network.Namespace))}}
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

// daemons sums what p's running services use (unitUsage read them) and
// warns when their memory is more than p's kube_reserved_memory: its
// kubelet gives its pods what the daemons then take (#41).
func (r *statusRun) daemons(p record.Partition, ps *PartitionStatus) {
	var d DaemonsUsage
	read := false
	for _, u := range ps.Units {
		if u.Usage != nil {
			d.CPUNanoseconds += u.Usage.CPUNanoseconds
			d.MemoryWorkingSetBytes += u.Usage.MemoryWorkingSetBytes
			d.MemoryAnonBytes += u.Usage.MemoryAnonBytes
			read = true
		}
	}
	if !read {
		return
	}
	d.KubeReservedMemoryBytes = p.KubeReservedMemory
	ps.Daemons = &d
	if reserved := p.KubeReservedMemory; reserved != nil && d.MemoryWorkingSetBytes > *reserved {
		r.warn("partition %s: its kubelet, containerd, allocator and holder use %s (%s their own, the rest page cache and tmpfs files they were charged for), more than its kube_reserved_memory (%s), which its kubelet keeps from the pods for them: the pods' allocatable counts memory the daemons hold; raise kubelet.kube_reserved_memory (or the partition's partition[].kube_reserved_memory) to at least that, with room for their growth while pods start",
			p.Name, units.FormatBytes(d.MemoryWorkingSetBytes), units.FormatBytes(d.MemoryAnonBytes), units.FormatBytes(*reserved))
	}
}

// hostMemory measures the host's memory on p's nodes (cgroup v2) and
// warns when it is more than the host's reservation there, which p's
// kubelet counts on instead (its eviction threshold: the kernel's OOM
// killer would come before kubelet's eviction).
func (r *statusRun) hostMemory(p record.Partition, ps *PartitionStatus) {
	if len(ps.Nodes) != p.Nodes.Len() {
		ps.HostMemoryError = "the NUMA nodes' memory was not read"
		return
	}
	charged, err := nodeview.ReadSliceNodeMemory(host.Root(r.o.Root), drift.SliceCgroup(p.Slice))
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
		if u, err := nodeview.ReadUsage(host.Root(r.o.Root), r.mode == cgroupmode.V2, info.ControlGroup); err != nil {
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

func recordedSet(r *record.Record, unit string) (record.SliceSet, bool) {
	for _, s := range r.Slices {
		if s.Unit == unit {
			return s, true
		}
	}
	return record.SliceSet{}, false
}
