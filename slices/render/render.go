package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/slices/bundle"

	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/kubeletgen"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/templates"
)

// Options are what a bundle needs that is not in the plan: where
// numa-partition itself lives on the target host. (The allocators read the
// rendered plan, PlanPath, so they decide with exactly the plan that
// rendered their kubelet's configuration, not with a config file that may
// have changed since.)
type Options struct {
	// Binary is numa-partition's path on the target host, for the units
	// that run it (the allocators and the hugepages oneshot).
	Binary string
}

// DefaultBinary is where the Debian package installs numa-partition.
const DefaultBinary = "/usr/bin/numa-partition"

// DefaultOptions are the paths the package and the docs use.
func DefaultOptions() Options {
	return Options{Binary: DefaultBinary}
}

// Render renders plan with DefaultOptions.
func Render(plan planner.Plan) (bundle.Bundle, error) {
	return RenderWith(plan, DefaultOptions())
}

// RenderWith turns a plan into the files that partition the host. It is a
// pure function: same plan and options, byte-identical bundle. It takes
// the plan as decided: every rule of the planner's was held where the
// plan entered (planned from a config, or read by planner.ParsePlan), and
// render checks none again (docs/architecture.md).
func RenderWith(plan planner.Plan, opt Options) (bundle.Bundle, error) {
	if err := absPath("binary", opt.Binary); err != nil {
		return bundle.Bundle{}, err
	}
	r := renderer{plan: &plan, opt: opt, files: map[string]bundle.File{}, hostMemoryReserved: map[string]uint64{}}
	if err := r.host(); err != nil {
		return bundle.Bundle{}, err
	}
	if err := r.uplink(); err != nil {
		return bundle.Bundle{}, err
	}
	for i := range plan.Partitions {
		if err := r.partition(&plan.Partitions[i]); err != nil {
			return bundle.Bundle{}, fmt.Errorf("partition %s: %w", plan.Partitions[i].Name, err)
		}
	}
	if err := r.allocatorTemplate(); err != nil {
		return bundle.Bundle{}, err
	}
	if err := r.hugepages(); err != nil {
		return bundle.Bundle{}, err
	}
	planJSON, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		return bundle.Bundle{}, fmt.Errorf("encoding the plan: %w", err)
	}
	if err := r.add(bundle.PlanPath, append(planJSON, '\n')); err != nil {
		return bundle.Bundle{}, err
	}
	return r.bundle(), nil
}

type renderer struct {
	plan     *planner.Plan
	opt      Options
	files    map[string]bundle.File
	units    []bundle.Unit
	warnings []string
	// sharedRuntime lists the partitions without a containerd of their own.
	sharedRuntime []string
	cgroupV2Only  []string
	cgroupV1Only  []string
	unifiedViews  []string
	// hostMemoryReserved: Partition.HostMemoryReserved, by partition.
	hostMemoryReserved map[string]uint64
	network            *bundle.Network // what the network oneshots make, as they are rendered
}

func (r *renderer) add(path string, content []byte) error {
	if _, dup := r.files[path]; dup {
		return fmt.Errorf("two rendered files share the path /%s", path)
	}
	r.files[path] = bundle.File{Path: path, Mode: 0o644, Content: content}
	return nil
}

func (r *renderer) template(path, name string, data any) error {
	b, err := templates.Execute(name, data)
	if err != nil {
		return err
	}
	return r.add(path, b)
}

func (r *renderer) bundle() bundle.Bundle {
	if len(r.sharedRuntime) > 1 {
		r.warnings = append(r.warnings, fmt.Sprintf("partitions %s share one container runtime: their kubelets share /var/lib/kubelet/device-plugins (kubernetes#120626), so device plugins work for one of them at most", strings.Join(r.sharedRuntime, ", ")))
	}
	b := bundle.Bundle{KernelCmdline: KernelCmdline(r.plan), Warnings: r.warnings, Hugepages: hugepagePools(r.plan), CgroupV2Only: r.cgroupV2Only, CgroupV1Only: r.cgroupV1Only, UnifiedViews: r.unifiedViews, Network: r.network,
		Hostname: r.plan.Hostname, ReservedCPUs: r.plan.Host.ReservedCPUs, Partitions: PartitionsOf(r.plan)}
	for i, p := range b.Partitions {
		if v, ok := r.hostMemoryReserved[p.Name]; ok {
			b.Partitions[i].HostMemoryReserved = &v
		}
	}
	for _, f := range r.files {
		b.Files = append(b.Files, f)
	}
	sort.Slice(b.Files, func(i, j int) bool { return b.Files[i].Path < b.Files[j].Path })
	b.Units = r.units
	for i := range b.Units {
		sort.Strings(b.Units[i].Files)
	}
	sort.SliceStable(b.Units, func(i, j int) bool {
		if b.Units[i].Phase != b.Units[j].Phase {
			return b.Units[i].Phase < b.Units[j].Phase
		}
		return b.Units[i].Name < b.Units[j].Name
	})
	b.Ports = Ports(r.plan, b.Units)
	return b
}

// host locks everything outside the partitions to the host's CPUs and
// memory nodes. That the host keeps a CPU and a memory node, and that
// there are partitions, is the planner's rule, held where a plan enters
// (planned, or read: planner.ParsePlan).
func (r *renderer) host() error {
	h := r.plan.Host
	for _, u := range hostUnits {
		path := dropInPath(u.name)
		err := r.template(path, "host.dropin.tmpl", map[string]string{
			"Section":     u.section,
			"AllowedCPUs": h.ReservedCPUs.String(),
			"MemoryNodes": h.MemoryNodes.String(),
		})
		if err != nil {
			return err
		}
		// Slices and scopes take new limits at daemon-reload or through
		// SetUnitProperties; they are never restarted.
		// The memory nodes are deliberately not locked (the template
		// says why): the Cpuset has none.
		r.units = append(r.units, bundle.Unit{Name: u.name, Phase: bundle.PhaseSlice, Files: []string{path},
			Cpuset: &bundle.Cpuset{CPUs: h.ReservedCPUs}})
	}
	return nil
}

// cpuView is the CPU and memory placement of a partition's daemon.
type cpuView struct {
	AllowedCPUs, CPUAffinity, MemoryNodes string
}

// daemonCPUs is where a partition's kubelet, containerd and allocator
// run: the host-reserved CPUs on the partition's own nodes, so that they
// never compete with the pods for the CPUs the CPU manager hands out
// exclusively, and their memory stays on the partition's nodes. A
// partition without such CPUs runs them on its pod CPUs (with a warning).
func (r *renderer) daemonCPUs(p *planner.Partition) bitmask.CPUSet {
	if !p.HostReservedCPUs.IsEmpty() {
		return p.HostReservedCPUs
	}
	r.warnings = append(r.warnings, fmt.Sprintf("partition %s has no host-reserved CPU on its nodes: its kubelet, containerd and allocator share its pods' CPUs %s (reserve a CPU on one of NUMA nodes %s to avoid it)", p.Name, p.CPUs, p.Nodes))
	return p.CPUs
}

func memoryNodes(p *planner.Partition) bitmask.NodeSet {
	if p.MemoryNodes.Len() > 0 {
		return p.MemoryNodes
	}
	return p.Nodes
}

// SliceCpuset is a partition's slice's AllowedCPUs= and
// AllowedMemoryNodes=: its pods' CPUs and its daemons' (daemonCPUs: the
// host-reserved CPUs on its nodes, else its pods'), on its memory nodes.
// Its allocator daemon checks the slice still runs on them (package
// nodecondition).
func SliceCpuset(p *planner.Partition) bundle.Cpuset {
	return bundle.Cpuset{CPUs: p.CPUs.Union(p.HostReservedCPUs), Mems: memoryNodes(p)}
}

// partition renders one partition's slice, runtime, allocator drop-in,
// kubelet unit and KubeletConfiguration.
//
// Where the daemons live: kubelet, containerd and the allocator run in the
// partition's own slice (nodeX.slice), next to nodeX-kubepods.slice that
// kubelet creates for the pods, pinned to daemonCPUs. That keeps
// everything a partition costs (shims, image pulls, kubelet itself)
// accounted to it and on its own memory nodes, gives one handle to stop
// the whole partition (systemctl stop nodeX.slice), and — through
// strict-cpu-reservation — keeps those daemon CPUs out of every pod's
// cpuset. nodeX.slice therefore allows the pods' CPUs plus daemonCPUs.
func (r *renderer) partition(p *planner.Partition) error {
	if err := r.netns(p); err != nil {
		return err
	}
	daemon := r.daemonCPUs(p)
	cpu := cpuView{AllowedCPUs: daemon.String(), CPUAffinity: daemon.String(), MemoryNodes: memoryNodes(p).String()}
	if err := r.slice(p, daemon); err != nil {
		return err
	}
	if err := r.kubelet(p, cpu); err != nil {
		return err
	}
	return r.allocatorDropIn(p, cpu, netnsOf(p))
}

// slice renders the partition's slice, with its pod and daemon CPUs.
func (r *renderer) slice(p *planner.Partition, daemon bitmask.CPUSet) error {
	slicePath := unitPath(p.Slice)
	sliceSet := SliceCpuset(p)
	err := r.template(slicePath, "partition.slice.tmpl", map[string]string{
		"Name":        p.Name,
		"Nodes":       p.Nodes.String(),
		"PodCPUs":     p.CPUs.String(),
		"DaemonCPUs":  daemon.String(),
		"AllowedCPUs": sliceSet.CPUs.String(),
		"MemoryNodes": sliceSet.Mems.String(),
	})
	if err != nil {
		return err
	}
	r.units = append(r.units, bundle.Unit{Name: p.Slice, Phase: bundle.PhaseSlice, Partition: p.Name, Start: true, Files: []string{slicePath}, Cpuset: &sliceSet})
	if p.Allocator.Mode == config.AllocatorModeNRI {
		r.cgroupV2Only = append(r.cgroupV2Only, p.Name)
	}
	return nil
}

// kubelet renders the partition's kubelet: its KubeletConfiguration and
// drop-ins, its unit (and, with its own containerd, that containerd's).
func (r *renderer) kubelet(p *planner.Partition, cpu cpuView) error {
	cfg, err := kubeletgen.Config(r.plan, p)
	if err != nil {
		return err
	}
	cfgYAML, err := kubeletgen.Marshal(p.Name, cfg)
	if err != nil {
		return err
	}
	cfgPath := rootRelative(p.Kubelet.ConfigPath)
	if err := r.add(cfgPath, cfgYAML); err != nil {
		return err
	}
	dropIns, err := r.dropIns(p)
	if err != nil {
		return err
	}
	machine, err := r.machineView(p)
	if err != nil {
		return err
	}
	k := r.kubeletView(p, cpu, machine)
	var viewFiles []string
	// The kind is one of the two the planner writes, its own containerd
	// or RuntimeShared (planner.ParsePlan refuses another in a plan file).
	switch p.Runtime.Kind {
	case planner.RuntimeContainerd:
		if err := r.containerd(p, cpu, k.Netns, machine); err != nil {
			return err
		}
		if viewFiles, err = r.ownRuntime(p, &k, machine); err != nil {
			return err
		}
	default:
		r.sharedRuntime = append(r.sharedRuntime, p.Name)
		k.ExecStart = continued(kubeletArgs(p))
	}
	sort.Strings(k.After)
	if err := r.template(unitPath(kubeletUnit(p.Name)), "kubelet.service.tmpl", k); err != nil {
		return err
	}
	// A change of the hugepage view restarts kubelet, whose
	// ExecStartPre= binds the new files.
	kubeletFiles := append(append([]string{unitPath(kubeletUnit(p.Name)), cfgPath}, dropIns...), viewFiles...)
	r.units = append(r.units, bundle.Unit{Name: kubeletUnit(p.Name), Phase: bundle.PhaseKubelet, Partition: p.Name, Enable: true, Start: true, Files: kubeletFiles,
		KubeletState: &bundle.KubeletState{Dir: rootRelative(p.Kubelet.RootDir), Settings: managerSettings(p, cfg, machine)}})
	return nil
}

// kubeletView is the kubelet unit's view before its runtime is known: its
// ordering, the hugetlb setup and, under the static CPU Manager, the
// state repair.
func (r *renderer) kubeletView(p *planner.Partition, cpu cpuView, machine machineView) kubeletView {
	ns := netnsOf(p)
	k := kubeletView{
		Name: p.Name, NodeName: p.NodeName, Nodes: p.Nodes.String(), Slice: p.Slice, CPU: cpu, Netns: ns,
		// In nri mode the allocator places every container, and
		// containerd refuses to create one while the allocator's plugin
		// is away (containerd's config). Not Requires=: an allocator
		// that restarts after a crash (2 s) restarted kubelet with it,
		// and kubelet's Node was NotReady for a minute for nothing.
		Wants:    []string{allocatorUnit(p.Name)},
		After:    []string{HugepagesUnit, allocatorUnit(p.Name)},
		Requires: []string{HugepagesUnit},
	}
	if ns != nil {
		k.Requires = append(k.Requires, ns.Unit)
		k.After = append(k.After, ns.Unit)
	}
	k.ExecStartPre = []string{kubeletHugetlb(p.Slice)}
	if p.Kubelet.CPUManagerPolicy == "static" {
		// The static policy always runs with strict-cpu-reservation here
		// (kubeletgen), under which kubelet 1.37 cannot start again once
		// Guaranteed pods hold every pod CPU (package kubeletstate).
		// With openat2 hidden from the unit, "+" runs it without the
		// filter: it reads kubelet's state files through openat2, which
		// keeps every path inside kubelet's root dir.
		repair := r.opt.Binary + " kubelet-state repair --root-dir " + p.Kubelet.RootDir
		if machine.hideOpenat2 {
			repair = "+" + repair
		}
		k.ExecStartPre = append(k.ExecStartPre, repair)
	}
	return k
}

// ownRuntime runs the kubelet in its partition's mount namespace, after
// its own containerd, with the machine it is shown: its nodes and their
// hugepage pools, made at every start (`view nodes`, `view hugepages`),
// so that a change of either restarts the kubelet and keeps the
// namespace, and the pods. It returns the hugepage view's files.
func (r *renderer) ownRuntime(p *planner.Partition, k *kubeletView, machine machineView) ([]string, error) {
	// First: the kubelet-state repair reads nothing of it, but kubelet
	// must find its machine in place.
	var view []string
	if machine.nodes != "" {
		nodes := []string{r.opt.Binary, "view", "nodes", "--nodes", machine.nodes}
		if !machine.hostCPUs.IsEmpty() {
			nodes = append(nodes, "--host-cpus", machine.hostCPUs.String())
		}
		view = append(view, inMountNamespace(p, "kubelet", nodes))
	}
	files, err := r.hugepageView(p)
	if err != nil {
		return nil, err
	}
	if files != nil {
		// After the nodes: it binds the pools of those shown.
		view = append(view, inMountNamespace(p, "kubelet", []string{r.opt.Binary, "view", "hugepages", "--partition", p.Name}))
	}
	k.ExecStartPre = append(view, k.ExecStartPre...)
	if machine.hideOpenat2 {
		// Before all: without it kubelet would report a usage of 0.
		k.HideOpenat2 = true
		k.ExecStartPre = append([]string{r.opt.Binary + " view check-openat2"}, k.ExecStartPre...)
	}
	k.After = append(k.After, containerdUnit(p.Name))
	k.Runtime = containerdUnit(p.Name)
	k.ExecStart = inMountNamespace(p, "kubelet", kubeletArgs(p))
	return files, nil
}

// dropIns writes the partition's KubeletConfiguration drop-ins into its
// kubelet's --config-dir and returns their paths.
func (r *renderer) dropIns(p *planner.Partition) ([]string, error) {
	var paths []string
	for _, d := range p.Kubelet.DropIns {
		content, err := kubeletgen.DropIn(p.Name, d)
		if err != nil {
			return nil, err
		}
		path := rootRelative(p.Kubelet.ConfigDir + "/" + d.File)
		if err := r.add(path, content); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// managerSettings are what kubelet's CPU and Memory Managers check their
// state files against at start (their validateState): the policies and
// options, the reserved CPUs, the reserved memory and the hugepage pools
// of the partition's nodes (the memory manager's machine state), and,
// for a kubelet shown its partition, the CPUs it is shown: the static
// policy refuses a state whose CPUs are not those less the reserved ones,
// and a layout change can change them with nothing else (the e2e's 4-node
// boot merged two nodes without hugepages or memory reservations: the
// kubelet never started again). Shown the whole machine, they never change.
func managerSettings(p *planner.Partition, cfg *kubeletv1beta1.KubeletConfiguration, machine machineView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cpu=%s", cfg.CPUManagerPolicy)
	keys := make([]string, 0, len(cfg.CPUManagerPolicyOptions))
	for k := range cfg.CPUManagerPolicyOptions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, ",%s=%s", k, cfg.CPUManagerPolicyOptions[k])
	}
	fmt.Fprintf(&b, " reservedCPUs=%s memory=%s reservedMemory=", cfg.ReservedSystemCPUs, cfg.MemoryManagerPolicy)
	for i, r := range cfg.ReservedMemory {
		if i > 0 {
			b.WriteString(",")
		}
		q := r.Limits[corev1.ResourceMemory]
		fmt.Fprintf(&b, "%d:%s", r.NumaNode, q.String())
	}
	b.WriteString(" hugepages=")
	first := true
	for _, m := range p.Memory {
		for _, h := range m.Hugepages {
			if !first {
				b.WriteString(",")
			}
			first = false
			b.WriteString(hugepool.Pool{Node: m.Node, PageSize: h.PageSize, Count: h.Count}.String())
		}
	}
	if machine.nodes != "" {
		fmt.Fprintf(&b, " machineCPUs=%s", machine.cpus)
	}
	return b.String()
}

// kubeletHugetlb runs before each kubelet start (at boot too). kubelet
// refuses a cgroupRoot without the hugetlb controller, and systemd does not
// manage hugetlb: on cgroup v2 it never enables it below the root cgroup
// ("cgroup [node0] has some missing controllers: hugetlb"), so the root's
// subtree_control must name it; on v1 it never creates the slice's group
// in the hugetlb hierarchy ("has some missing paths:
// /sys/fs/cgroup/hugetlb/node0.slice"), so this creates it. remove takes
// the v1 group away and leaves the v2 controller enabled (harmless, gone
// at the next boot). Both found by the e2e with the real kubelet 1.37.2.
//
// A failure is reported, not fatal: where the root cannot take the
// controller (a container's cgroup namespace), kubelet itself then says
// which controller is missing.
func kubeletHugetlb(slice string) string {
	const warn = `|| echo "numa-partition: cannot prepare the hugetlb controller for kubelet (it refuses a cgroupRoot without it)" >&2`
	return `/bin/sh -c 'c=/sys/fs/cgroup; ` +
		`if [ -f $$c/cgroup.subtree_control ]; then ` +
		`if grep -qw hugetlb $$c/cgroup.controllers && ! grep -qw hugetlb $$c/cgroup.subtree_control; then echo +hugetlb > $$c/cgroup.subtree_control ` + warn + `; fi; ` +
		`elif [ -d $$c/hugetlb ]; then mkdir -p $$c/hugetlb/` + slice + ` ` + warn + `; fi'`
}

type kubeletView struct {
	Name, NodeName, Nodes, Slice string
	Wants, After, Requires       []string
	Runtime                      string // the partition's own containerd, which kubelet restarts with
	ExecStartPre                 []string
	ExecStart                    string
	// HideOpenat2: kubelet's cgroup library opens cgroup files by path,
	// and so reads the slice's v2 usage files the holder binds over the
	// root's (slices/nodeview/usage.go).
	HideOpenat2 bool
	CPU         cpuView
	Netns       *netnsView
}

// kubeletArgs are the flag-only settings: kubelet has no config field for
// them (kubernetes PR #76556 was closed unmerged). Each is one a unit's
// command line carries unquoted (validation.ArgProblem) by the planner's
// rules for the paths, the Node name, the labels and the extra arguments,
// held where the plan entered.
func kubeletArgs(p *planner.Partition) []string {
	k := p.Kubelet
	args := []string{
		k.Binary,
		"--config=" + k.ConfigPath,
		"--kubeconfig=" + k.Kubeconfig,
		"--bootstrap-kubeconfig=" + k.BootstrapKubeconfig,
		"--cert-dir=" + k.CertDir,
		"--root-dir=" + kubeletRootDir(p),
	}
	if p.NodeName != "" {
		args = append(args, "--hostname-override="+p.NodeName)
	}
	if p.Network != nil {
		// The Node's InternalIP: the partition's own address.
		args = append(args, "--node-ip="+p.Network.Address.Addr().String())
	}
	if labels := planner.NodeLabelsArg(p.Labels); labels != "" {
		args = append(args, labels)
	}
	if len(k.DropIns) > 0 {
		// The user's KubeletConfiguration fields, merged over --config.
		args = append(args, "--config-dir="+k.ConfigDir)
	}
	return append(args, k.ExtraArgs...)
}

// bindKubeletDir is where the mount namespace's unit binds the
// partition's root dir: kubelet's default, unless it is that already.
func bindKubeletDir(p *planner.Partition) string {
	if p.Kubelet.RootDir == defaultKubeletDir {
		return ""
	}
	return defaultKubeletDir
}

// defaultKubeletDir is kubelet's default root dir, which DaemonSets'
// hostPaths name.
const defaultKubeletDir = "/var/lib/kubelet"

// kubeletRootDir is the --root-dir kubelet runs with: in the partition's
// mount namespace the partition's root dir is bound at kubelet's default
// (mountns.service.tmpl), so there kubelet uses the default path; with
// a shared runtime, kubelet has no namespace and uses the plan's.
func kubeletRootDir(p *planner.Partition) string {
	if p.Runtime.Kind == planner.RuntimeContainerd {
		return defaultKubeletDir
	}
	return p.Kubelet.RootDir
}

// continued writes a command line one argument per line.
func continued(args []string) string {
	return strings.Join(args, " \\\n    ")
}

// nriRequestTimeout is how long containerd waits for the allocator's
// answer to one NRI event. The allocator decides in microseconds, but
// containerd's default of 2 s passed on an overloaded host in the e2e
// (every kubelet's housekeeping taking 6 s): containerd then drops the
// plugin and creates the container unplaced. A slow answer must delay a
// container, never let it start in the wrong place.
const nriRequestTimeout = "15s"

// requiredNRIPlugin is the NRI plugin without which the partition's
// containerd creates no container: the allocator's, in nri mode.
func requiredNRIPlugin(p *planner.Partition) string {
	if p.Allocator.Mode != config.AllocatorModeNRI {
		return ""
	}
	return p.Allocator.NRIPlugin
}

// containerd renders the partition's own containerd: unit and config.
func (r *renderer) containerd(p *planner.Partition, cpu cpuView, ns *netnsView, machine machineView) error {
	rt := p.Runtime
	// Every path here, the endpoint and the device plugins directory
	// (below /var/lib/, not kubelet's shared one) were checked by the
	// planner's rules (planner.CheckPaths, when it was planned or read).
	// The sandbox image is an image reference, and the allocator's NRI
	// socket is containerd's, in its state dir (hostpaths.NRISocket): the
	// planner's rules too.
	socket := strings.TrimPrefix(rt.Endpoint, "unix://")
	nriSocket := hostpaths.NRISocket(rt.StateDir)
	cfgPath := rootRelative(rt.ConfigPath)
	err := r.template(cfgPath, "containerd.toml.tmpl", map[string]string{
		"Name": p.Name, "Root": rt.RootDir, "State": rt.StateDir, "Socket": socket, "NRISocket": nriSocket, "NRIRequestTimeout": nriRequestTimeout,
		"SandboxImage": rt.SandboxImage, "CNIConfDir": rt.CNIConfDir, "CNIBinDir": rt.CNIBinDir,
		"RequiredPlugin": requiredNRIPlugin(p),
	})
	if err != nil {
		return err
	}
	if err := r.mountNamespace(p, ns, machine); err != nil {
		return err
	}
	exec := inMountNamespace(p, "containerd", []string{rt.Binary, "--config", rt.ConfigPath})
	unit := containerdUnit(p.Name)
	err = r.template(unitPath(unit), "containerd.service.tmpl", map[string]any{
		"Name": p.Name, "Nodes": p.Nodes.String(), "Slice": p.Slice, "CPU": cpu, "Netns": ns,
		"MountNamespace": bundle.MountnsUnit(p.Name), "ExecStart": exec,
	})
	if err != nil {
		return err
	}
	files := []string{unitPath(unit), cfgPath}
	r.units = append(r.units, bundle.Unit{Name: unit, Phase: bundle.PhaseRuntime, Partition: p.Name, Enable: true, Start: true, Files: files})
	return nil
}

// hugepageView renders partition p's view of the hugepage pools: a file
// per sysfs pool file kubelet reads, which the kubelet's `view hugepages`
// binds over them at its every start (slices/nodeview/pools.go). nil
// when the plan renders no view.
func (r *renderer) hugepageView(p *planner.Partition) (files []string, err error) {
	view, ok, err := kubeletgen.HugepageView(r.plan, p)
	if err != nil || !ok {
		return nil, err
	}
	for _, v := range view {
		src := hugepageViewDir(p.Name) + "/" + v.Path
		if err := r.add(src, []byte(v.Value+"\n")); err != nil {
			return nil, err
		}
		files = append(files, src)
	}
	return files, nil
}

// allocatorTemplate renders numa-allocator@.service, shared by every
// partition's instance.
func (r *renderer) allocatorTemplate() error {
	exec := fmt.Sprintf("%s allocator serve --partition %%i --plan /%s", r.opt.Binary, bundle.PlanPath)
	return r.template(unitPath(AllocatorTemplate), "numa-allocator@.service.tmpl", map[string]string{"ExecStart": exec})
}

// allocatorDropIn pins one allocator instance and names its directories.
func (r *renderer) allocatorDropIn(p *planner.Partition, cpu cpuView, ns *netnsView) error {
	a := p.Allocator
	// The planner keeps the socket in a directory below /run/ and the
	// state dir below /var/lib/, which systemd's RuntimeDirectory= and
	// StateDirectory= make (planner.CheckPaths, when it was planned or read).
	runDir := strings.TrimPrefix(dirOf(a.Socket), "/run/")
	stateDir := strings.TrimPrefix(a.StateDir, "/var/lib/")
	unit := allocatorUnit(p.Name)
	path := dropInPath(unit)
	after := ""
	if a.NRISocket != "" && p.Runtime.Kind == planner.RuntimeContainerd {
		after = containerdUnit(p.Name)
	}
	digest, err := servedPlanDigest(p)
	if err != nil {
		return err
	}
	err = r.template(path, "allocator.dropin.tmpl", map[string]any{"Name": p.Name, "PlanDigest": digest, "CPU": cpu, "RuntimeDirectory": runDir, "StateDirectory": stateDir,
		"After": after, "Required": a.Mode == config.AllocatorModeNRI, "Netns": ns})
	if err != nil {
		return err
	}
	r.units = append(r.units, bundle.Unit{Name: unit, Phase: bundle.PhaseAllocator, Partition: p.Name, Enable: true, Start: true,
		Files: []string{unitPath(AllocatorTemplate), path}})
	return nil
}

func dirOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// hugepages renders the oneshot that sets every node's pools.
func (r *renderer) hugepages() error {
	specs := HugepageSpecs(r.plan)
	// The partitions' nodes: pools there that the plan does not list are
	// freed at boot (hugepool.Fill), not refused for every kubelet.
	var owned bitmask.NodeSet
	for _, p := range r.plan.Partitions {
		owned = owned.Union(p.Nodes)
	}
	args := append([]string{r.opt.Binary, "hugepages", "apply", "--nodes", owned.String()}, specs...)
	var before []string
	for _, p := range r.plan.Partitions {
		before = append(before, kubeletUnit(p.Name))
	}
	cmdline := KernelCmdline(r.plan)
	if cmdline == "" {
		cmdline = "(no hugepages planned)"
	}
	path := unitPath(HugepagesUnit)
	err := r.template(path, "hugepages.service.tmpl", map[string]any{
		"ExecStart": continued(args), "Before": before, "KernelCmdline": cmdline,
	})
	if err != nil {
		return err
	}
	r.units = append(r.units, bundle.Unit{Name: HugepagesUnit, Phase: bundle.PhaseHugepages, Enable: true, Start: true, Files: []string{path}, KeepOnChange: true})
	return nil
}
