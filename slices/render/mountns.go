package render

import (
	"fmt"
	"strings"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/kubeletgen"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// mountNamespace renders the unit that holds partition p's mount
// namespace, with every bind that shapes the partition's view of the
// host: the device-plugins directory and kubelet's root dir at kubelet's
// defaults and the node dirs. The machine kubelet is shown (its nodes,
// their pools) is made at every kubelet start instead (ownRuntime), so
// that a change of it keeps the namespace and the pods.
//
// Why a holder of its own rather than containerd's namespace: systemd
// builds a service's mount namespace anew at each start, as a slave of
// the host's, and mounts made inside never propagate back. containerd
// mounts every pod's network namespace (/run/netns/cni-*) inside; when it
// restarted in a new namespace, those mounts were gone, containerd
// reported every sandbox without an IP and kubelet killed and re-created
// every pod of the partition. The holder's namespace outlives containerd,
// so a restarted containerd (and kubelet) enter the same mounts.
func (r *renderer) mountNamespace(p *planner.Partition, ns *netnsView, machine machineView) error {
	// BindPaths= needs both ends to exist before the mount namespace is
	// set up, which is before any ExecStartPre= runs; StateDirectory=
	// creates them (as root, 0755) just before: the planner keeps the
	// directory under /var/lib.
	ownState := strings.TrimPrefix(p.Kubelet.DevicePluginsDir, "/var/lib/")
	sharedState := strings.TrimPrefix(planner.SharedDevicePluginsDir, "/var/lib/")
	dirs := nodeDirsView(p)
	unit := bundle.MountnsUnit(p.Name)
	err := r.template(unitPath(unit), "mountns.service.tmpl", map[string]any{
		"Name": p.Name, "Slice": p.Slice, "Netns": ns,
		"Before":           []string{containerdUnit(p.Name), kubeletUnit(p.Name)},
		"DevicePluginsDir": p.Kubelet.DevicePluginsDir,
		"SharedDir":        planner.SharedDevicePluginsDir,
		"StateDirectories": ownState + " " + sharedState,
		"RootDir":          p.Kubelet.RootDir,
		"KubeletDir":       bindKubeletDir(p),
		"NodeDirs":         dirs,
		"ExecStart":        machine.holder,
		"Unified":          machine.hideOpenat2,
	})
	if err != nil {
		return err
	}
	// A change of the binds is a new namespace: the holder restarts, and
	// containerd and kubelet with it (PartOf=).
	r.units = append(r.units, bundle.Unit{Name: unit, Phase: bundle.PhaseNetwork, Partition: p.Name, Enable: true, Start: true, Files: []string{unitPath(unit)}, RecreatesPods: true})
	return nil
}

// machineView is what partition p's kubelet is shown of the machine
// (kubeletgen/machine.go): nodes, its NUMA nodes, which its kubelet's
// ExecStartPre= leaves alone in /sys/devices/system/node (`view nodes`),
// and the holder's command, which serves their /proc/meminfo. The holder
// never names the nodes: a layout change restarts the kubelet, and the
// namespace with its pods stays. Shown the whole machine, nodes is "",
// the holder serves nothing, and the bundle says why.
type machineView struct {
	nodes  string
	holder string
	// hideOpenat2: the holder binds the slice's cgroup v2 usage files
	// over the root's, which kubelet reads only with openat2 hidden
	// (nodeview/usage.go).
	hideOpenat2 bool
	// cpus are the CPUs the kubelet counts (kubeletgen.Machine).
	cpus bitmask.CPUSet
	// hostCPUs are the host's CPUs its nodes list too
	// (kubeletgen.Machine.ShownHostCPUs).
	hostCPUs bitmask.CPUSet
}

func (r *renderer) machineView(p *planner.Partition) (machineView, error) {
	m, err := kubeletgen.MachineOf(r.plan, p)
	if err != nil {
		return machineView{}, err
	}
	v := machineView{holder: fmt.Sprintf("%s view hold --slice %s", r.opt.Binary, p.Slice), cpus: m.CPUs, hostCPUs: m.ShownHostCPUs}
	if r.plan.Host.CgroupMode == cgroupmode.V2 && p.Runtime.Kind == planner.RuntimeContainerd {
		v.holder += " --unified"
		v.hideOpenat2 = true
		// On a v1 host the hidden openat2 would make kubelet refuse the
		// holder's served memory files: apply refuses it there.
		r.unifiedViews = append(r.unifiedViews, p.Name)
	}
	if m.HostMemoryUnseen {
		r.hostMemoryReserved[p.Name] = p.Kubelet.SystemReservedMemory
	}
	if !m.Partition {
		r.warnings = append(r.warnings, fmt.Sprintf("partition %s: its kubelet is shown the whole machine, so its Node's cpu and memory capacity are the machine's (allocatable is still its share): %s", p.Name, m.WholeMachineWhy))
		return v, nil
	}
	if r.plan.Host.CgroupMode != cgroupmode.V2 {
		// On a v2 host, runc's cgroup library would refuse the v1
		// render's binds: apply refuses it there.
		r.cgroupV1Only = append(r.cgroupV1Only, p.Name)
	}
	var nodes bitmask.NodeSet
	for _, n := range m.Nodes {
		nodes = nodes.Add(n.Node)
	}
	v.nodes = nodes.String()
	v.holder += " --meminfo"
	return v, nil
}

// inMountNamespace is the ExecStart= of a daemon of partition p (its
// containerd, its kubelet) that runs inside the partition's mount
// namespace: it looks up the holder's MainPID and execs the daemon
// through nsenter, so that systemd's MainPID is the daemon itself. Every
// argument lands inside one single-quoted shell word: the planner's rules
// (paths, kubelet's arguments: validation.ArgProblem) keep quotes and '$'
// out of each, where the plan entered.
func inMountNamespace(p *planner.Partition, daemon string, args []string) string {
	unit := bundle.MountnsUnit(p.Name)
	// "$$" is systemd's escape for a literal "$" seen by the shell.
	script := fmt.Sprintf(`pid=$$(systemctl show --property=MainPID --value %s); `+
		`if [ "$${pid:-0}" -le 0 ]; then echo "%s is not running: %s-%s joins its mount namespace" >&2; exit 1; fi; `+
		`exec nsenter --mount=/proc/$$pid/ns/mnt -- %s`, unit, unit, daemon, p.Name, strings.Join(args, " \\\n    "))
	return "/bin/sh -c '" + script + "'"
}
