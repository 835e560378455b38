package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// NewPlan turns a machine and a config into a Plan. It is pure and
// deterministic: the same inputs give the same Plan, nothing is read from
// the host (the hostname comes in as kubelet.hostname). Every problem is
// reported at once as Errors; warnings (assumptions the plan had to make)
// go into Plan.Warnings. It plans without host facts: see NewPlanFor.
func NewPlan(t *numa.Topology, c *config.Config) (*Plan, error) { return NewPlanFor(t, nil, c) }

// NewPlanFor is NewPlan with the host's facts (the filesystems under the
// kubelet root dirs and the pid limit), from which each partition gets
// its share of ephemeral-storage and pids (shares.go). It is as pure as
// facts is.
func NewPlanFor(t *numa.Topology, facts HostFacts, c *config.Config) (*Plan, error) {
	if c == nil {
		c = &config.Config{}
	}
	pl := &planning{m: newMachine(t), c: c, facts: facts, col: config.NewCollector(c)}
	col := pl.col
	if len(t.Nodes) == 0 {
		col.Add("", "the topology has no NUMA nodes; discovery found nothing to partition")
		return nil, col.Err()
	}
	hostname := strings.ToLower(strings.TrimSpace(c.Kubelet.Hostname))
	if hostname == "" {
		col.Add("kubelet.hostname", "is empty; the CLI fills it from the host name, set it when planning for another machine")
	}

	groups, excluded := pl.planGroups()
	reserved := pl.reservedCPUs(c.Host.ReservedCPUs, groups)
	if orphans := pl.m.orphanCPUs(); !orphans.IsEmpty() {
		pl.warn("online CPUs %s are on no NUMA node that sysfs lists; they stay with the host", orphans)
	}
	pl.matchOverrides(groups)

	pl.plan = &Plan{Hostname: hostname, Partitions: make([]Partition, 0, len(groups))}
	plan := pl.plan
	pl.perPart = make([]settings, len(groups))
	for i, g := range groups {
		s := merge(c, g.override)
		pl.perPart[i] = s
		plan.Partitions = append(plan.Partitions, pl.newPartition(i, g, s, reserved, hostname))
	}
	plan.Host = pl.newHost(reserved, excluded)
	pl.planNetwork()
	pl.planNodeDirs()
	pl.planMemory()
	pl.planShares()
	// The node limit first, on kubelet's options: nri mode moves them
	// to the allocator, which refuses more than 8 nodes without it.
	pl.checkTopologyLimit()
	pl.planAllocatorModes()
	if c.Runtime.Mode == config.RuntimeModeShared && len(plan.Partitions) > 1 {
		pl.warn("runtime.mode = \"shared\": kubelets that share a runtime treat each other's pods as orphans and kill them; use it only if the runtime separates them (docs/spec/multi-kubelet-notes.md)")
	}
	pl.validatePlan()
	if err := col.Err(); err != nil {
		return nil, err
	}
	plan.Warnings = append(pl.m.t.Warnings[:0:0], pl.warnings...)
	if plan.Warnings == nil {
		plan.Warnings = []string{}
	}
	return plan, nil
}

// planning is one NewPlanFor: its inputs (the machine, the config, the
// host facts), where problems and warnings go, and the plan as it is
// built (per partition, the settings its overrides merge to). Each stage
// of the plan is a method of it.
type planning struct {
	m       *machine
	c       *config.Config
	facts   HostFacts
	col     *config.Collector
	plan    *Plan
	perPart []settings

	warnings []string
}

// warn records an assumption the plan had to make (Plan.Warnings).
func (pl *planning) warn(format string, args ...any) {
	pl.warnings = append(pl.warnings, fmt.Sprintf(format, args...))
}

// newPartition fills one partition from its group and merged settings.
func (pl *planning) newPartition(i int, g group, s settings, reserved bitmask.CPUSet, hostname string) Partition {
	m := pl.m
	first := g.nodes.Intersect(m.cpuNodes()).Min()
	if first < 0 {
		first = g.nodes.Min()
	}
	name := defaultName(first)
	if s.p != nil && s.p.Name != "" {
		name = s.p.Name
	}
	cpus := m.cpusOf(g.nodes)
	p := Partition{
		Index:            i,
		Name:             name,
		Slice:            name + ".slice",
		Color:            colorOf(i),
		Nodes:            g.nodes,
		CPUs:             cpus.Difference(reserved),
		HostReservedCPUs: cpus.Intersect(reserved),
		MemoryNodes:      m.memoryNodes(g.nodes),
	}
	x := &expander{vars: templateVars{partition: name, index: i, hostname: hostname}, col: pl.col}
	// The root dir first: every other template may name it ({root_dir}
	// in pod_logs_dir was called unknown while its allowed list named it).
	x.vars.rootDir = x.expand("kubelet.root_dir", s.k.RootDir, config.DefaultRootDir)
	p.NodeName = x.expand(s.key["node_name"], s.k.NodeName, config.DefaultNodeName)
	stride := intOr(s.k.PortStride, pl.defaultPortStride())
	p.Kubelet = pl.newKubelet(name, i*stride, s, x)
	p.Labels = ownLabels(name, p.Color, hostname)
	for _, labels := range []struct {
		key string
		m   map[string]string
	}{{"kubelet.labels", s.k.Labels}, {partKey(s, "labels"), partLabels(s)}} {
		for _, lk := range sortedKeys(labels.m) {
			p.Labels[lk] = x.expand(labels.key+"."+lk, labels.m[lk], "")
		}
	}
	p.Taints = checkedTaints(s.k.Taints, partTaints(s))
	p.Runtime = newRuntime(pl.c, s, x.expand)
	p.Allocator = newAllocator(pl.c, i*stride, x)
	return p
}

// expander expands a partition's templated values ({partition}, {index},
// {hostname}, and {root_dir} once it is known), adding an unknown
// placeholder to the config's problems.
type expander struct {
	vars templateVars
	col  *config.Collector
}

// expand is value (def when empty) expanded; key names it in a problem.
func (x *expander) expand(key, value, def string) string {
	if value == "" {
		value = def
	}
	out, unknown := x.vars.expand(value)
	if len(unknown) > 0 {
		allowed := "{partition}, {index}, {hostname}"
		if x.vars.rootDir != "" {
			allowed += ", {root_dir}"
		}
		x.col.Add(key, "%q uses unknown placeholders %s (allowed: %s)", value, strings.Join(unknown, ", "), config.Whole(allowed))
	}
	return out
}

// newKubelet is partition name's kubelet: its paths, ports (shifted by
// portShift in the host's namespace), managers and reservations.
func (pl *planning) newKubelet(name string, portShift int, s settings, x *expander) Kubelet {
	k := s.k
	kl := Kubelet{
		Binary:              or(k.Binary, config.DefaultKubeletBinary),
		ConfigPath:          x.expand("kubelet.config_path", k.ConfigPath, config.DefaultKubeletConfigPath),
		RootDir:             x.vars.rootDir,
		Kubeconfig:          x.expand("kubelet.kubeconfig", k.Kubeconfig, config.DefaultKubeconfig),
		BootstrapKubeconfig: x.expand("kubelet.bootstrap_kubeconfig", k.BootstrapKubeconfig, config.DefaultBootstrapKubeconfig),
		CgroupRoot:          CgroupRoot(name),
		PodLogsDir:          x.expand("kubelet.pod_logs_dir", k.PodLogsDir, config.DefaultPodLogsDir),
		MaxPods:             intOr(k.MaxPods, config.DefaultMaxPods),

		CPUManagerPolicy:      or(k.CPUManagerPolicy, config.DefaultCPUManagerPolicy),
		MemoryManagerPolicy:   or(k.MemoryManagerPolicy, config.DefaultMemoryManagerPolicy),
		TopologyManagerPolicy: or(k.TopologyManagerPolicy, config.DefaultTopologyManagerPolicy),
		TopologyManagerScope:  or(k.TopologyManagerScope, config.DefaultTopologyManagerScope),
	}
	kl.CertDir = x.expand("kubelet.cert_dir", k.CertDir, config.DefaultCertDir)
	kl.DevicePluginsDir = x.expand("kubelet.device_plugins_dir", k.DevicePluginsDir, config.DefaultDevicePluginsDir)
	if k.StaticPodPath != "" {
		kl.StaticPodPath = x.expand("kubelet.static_pod_path", k.StaticPodPath, "")
	}
	kl.Port = intOr(k.Port, config.DefaultPort) + portShift
	kl.HealthzPort = intOr(k.HealthzPort, config.DefaultHealthzPort) + portShift
	if ro := intOr(k.ReadOnlyPort, config.DefaultReadOnlyPort); ro != 0 {
		kl.ReadOnlyPort = ro + portShift
	}
	kl.CPUManagerPolicyOptions = copyMap(k.CPUManagerPolicyOptions)
	if kl.CPUManagerPolicy == "static" {
		// Always, also beside options of the user's (who may not turn it
		// off: StrictCPUReservationProblem).
		if kl.CPUManagerPolicyOptions == nil {
			kl.CPUManagerPolicyOptions = map[string]string{}
		}
		for o, v := range defaultCPUManagerPolicyOptions() {
			if _, set := kl.CPUManagerPolicyOptions[o]; !set {
				kl.CPUManagerPolicyOptions[o] = v
			}
		}
	}
	kl.TopologyManagerOptions = copyMap(k.TopologyManagerOptions)
	kl.ExtraArgs = append([]string(nil), k.ExtraArgs...)
	kl.ClusterDNS = append([]string(nil), k.ClusterDNS...)
	kl.ClusterDomain = k.ClusterDomain
	if kl.ClusterDomain == "" && len(kl.ClusterDNS) > 0 {
		// kubelet's own default is none, and pods then search no cluster
		// domain: "my-svc" and "kubernetes.default" go to the upstream
		// and fail (found by the e2e). kubeadm's default, as a cluster
		// with a cluster DNS has it.
		kl.ClusterDomain = config.DefaultClusterDomain
	}
	if kl.DropIns = kubeletDropIns(pl.c, s, pl.col); len(kl.DropIns) > 0 {
		kl.ConfigDir = ConfigDirOf(kl.ConfigPath)
	}
	kl.KubeReservedMemory = sizeOr(pl.col, s.key["kube_reserved_memory"], k.KubeReservedMemory, config.DefaultKubeReservedMemory)
	kl.SystemReservedMemory = sizeOr(pl.col, s.key["system_reserved_memory"], k.SystemReservedMemory, config.DefaultSystemReservedMemory)
	kl.EvictionHardMemory = sizeOr(pl.col, s.key["eviction_hard_memory"], k.EvictionHardMemory, config.DefaultEvictionHardMemory)
	return kl
}

// newAllocator is a partition's allocator daemon: one setting for every
// partition's, its metrics port shifted by portShift.
func newAllocator(c *config.Config, portShift int, x *expander) Allocator {
	a := Allocator{
		Socket:      x.expand("allocator.socket", c.Allocator.Socket, config.DefaultAllocatorSocket),
		StateDir:    x.expand("allocator.state_dir", c.Allocator.StateDir, config.DefaultAllocatorStateDir),
		SocketGroup: c.Allocator.SocketGroup,
		// One setting for every partition's daemon.
		SyncBeforeAnswer: c.Allocator.SyncBeforeAnswer != nil && *c.Allocator.SyncBeforeAnswer,
	}
	if base := intOr(c.Allocator.MetricsPort, config.DefaultMetricsPort); base != 0 {
		a.MetricsPort = base + portShift
	}
	return a
}

// defaultPortStride: partitions in namespaces of their own listen on
// kubelet's standard ports, each in its namespace, as every Node does;
// in the host's one namespace each needs ports of its own.
func (pl *planning) defaultPortStride() int {
	if pl.namespaced() {
		return 0
	}
	return config.DefaultPortStride
}

// namespaced reports whether each partition has a network namespace.
func (pl *planning) namespaced() bool {
	return or(pl.c.Network.Mode, NetworkNamespace) == NetworkNamespace
}

// CgroupRoot is the kubelet cgroupRoot that puts a partition's pods in its
// slice. kubelet reads cgroupRoot in cgroupfs form whatever its driver, and
// its systemd driver turns each component into a slice: "/node0" becomes
// node0.slice, and the pods go to node0.slice/node0-kubepods.slice. The
// slice's own name ("/node0.slice") would become node0.slice.slice, which
// kubelet 1.37 refuses to start on ("could not read controllers").
func CgroupRoot(partition string) string { return "/" + partition }

func newRuntime(c *config.Config, s settings, ex func(key, value, def string) string) Runtime {
	r := c.Runtime
	if s.p != nil && s.p.ContainerdBinary != "" {
		r.Binary = s.p.ContainerdBinary
	}
	if r.Mode == config.RuntimeModeShared {
		return Runtime{Kind: RuntimeShared, Endpoint: ex("runtime.endpoint", r.Endpoint, "")}
	}
	return Runtime{
		Kind:       RuntimeContainerd,
		Endpoint:   ex("runtime.endpoint", r.Endpoint, config.DefaultContainerdEndpoint),
		Binary:     or(r.Binary, config.DefaultContainerdBinary),
		ConfigPath: ex("runtime.config_path", r.ConfigPath, config.DefaultContainerdConfigPath),
		RootDir:    ex("runtime.root_dir", r.RootDir, config.DefaultContainerdRootDir),
		StateDir:   ex("runtime.state_dir", r.StateDir, config.DefaultContainerdStateDir),

		SandboxImage: r.SandboxImage,
		CNIConfDir:   ex("runtime.cni_conf_dir", r.CNIConfDir, config.DefaultCNIConfDir),
		CNIBinDir:    or(r.CNIBinDir, config.DefaultCNIBinDir),
	}
}

// cgroupMode is the host facts' cgroup mode, "" when they do not say (a
// warning says why when they fail to).
func (pl *planning) cgroupMode() cgroupmode.Mode {
	cf, ok := pl.facts.(CgroupFacts)
	if !ok {
		return ""
	}
	mode, err := cf.CgroupMode()
	if err != nil {
		pl.warn("the host's cgroup mode is unknown (%v): every kubelet is shown the whole machine", err)
		return ""
	}
	return mode
}

// newHost is what the host keeps: the reserved CPUs plus the CPUs of
// excluded nodes and of no node (every online CPU is the host's or one
// partition's), and
// the memory nodes its own processes use.
func (pl *planning) newHost(reserved bitmask.CPUSet, excluded bitmask.NodeSet) Host {
	m, c, col := pl.m, pl.c, pl.col
	h := Host{ReservedCPUs: reserved.Union(m.cpusOf(excluded)).Union(m.orphanCPUs()), ExcludedNodes: excluded,
		OnlineCPUs: m.online, OrphanCPUs: m.orphanCPUs(), CgroupMode: pl.cgroupMode()}
	for _, id := range excluded.IDs() {
		h.ExcludedMemory = append(h.ExcludedMemory, NodeMemory{Node: id, TotalBytes: m.memory[id], Hugepages: []HugepagePlan{}, PageSizes: m.pageSizes(id)})
	}
	if c.Host.MemoryNodes.Set {
		nodes := c.Host.MemoryNodes.Nodes
		switch {
		case nodes.IsEmpty():
			col.Add("host.memory_nodes", "is empty; the host needs memory (leave it out for the nodes of host.reserved_cpus)")
		case !nodes.IsSubsetOf(m.nodes):
			col.Add("host.memory_nodes", "names nodes %s that the machine does not have (it has %s)", nodes.Difference(m.nodes), m.nodes)
		case m.memoryNodes(nodes) != nodes:
			col.Add("host.memory_nodes", "names nodes %s that have no memory", nodes.Difference(m.memoryNodes(nodes)))
		}
		h.MemoryNodes = nodes
		return h
	}
	h.MemoryNodes = m.memoryNodes(m.nodesOfCPUs(h.ReservedCPUs))
	if h.MemoryNodes.IsEmpty() {
		// Reserved CPUs on a memory-less node: use the nearest node with memory.
		h.MemoryNodes = m.memoryNodes(m.nodes)
		if !h.MemoryNodes.IsEmpty() {
			h.MemoryNodes = bitmask.NewNodeSet(h.MemoryNodes.Min())
		}
	}
	if h.MemoryNodes.IsEmpty() {
		// No node shows memory (no meminfo with a MemTotal): a plan
		// file's host is held to the same rule (hostProblem).
		col.Add("host.memory_nodes", "finds no NUMA node with memory on this machine (no node's meminfo has a MemTotal), and the host's own processes need one")
	}
	return h
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func intOr(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// sizeOr parses a size value (or its default) with the one size parser.
func sizeOr(col *config.Collector, key, value, def string) uint64 {
	if value == "" {
		value = def
	}
	b, err := units.ParseBytes(value)
	if err != nil {
		col.Add(key, "%v", err)
	}
	return b
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func partKey(s settings, name string) string {
	if s.p == nil {
		return "kubelet." + name
	}
	return s.pre + name
}

func partLabels(s settings) map[string]string {
	if s.p == nil {
		return nil
	}
	return s.p.Labels
}

func partTaints(s settings) []string {
	if s.p == nil {
		return nil
	}
	return s.p.Taints
}
