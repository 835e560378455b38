package planner

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// WriteTable prints a plan for people: the host line, one row per
// partition, each partition's labels and paths, then the warnings. The
// JSON form (Plan itself) is the one for programs.
func WriteTable(w io.Writer, p *Plan) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "HOST\treserved CPUs %s\tmemory nodes %s\texcluded nodes %s%s\n",
		orDash(p.Host.ReservedCPUs.String()), orDash(p.Host.MemoryNodes.String()), orDash(p.Host.ExcludedNodes.String()), hostShares(p))
	fmt.Fprintf(tw, "NETWORK\t%s\n", networkSummary(p.Network))
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "PARTITION\tSLICE\tNODES\tCPUS\tHOST CPUS\tMEMORY NODES\tRESERVED\tHUGEPAGES\tNODE NAME\tADDRESS\tPORT/HEALTHZ/RO\tCOLOR")
	for _, part := range p.Partitions {
		k := part.Kubelet
		addr := "host's"
		if part.Network != nil {
			addr = part.Network.Address.Addr().String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d/%s\t%s\n",
			part.Name, part.Slice, part.Nodes, orDash(part.CPUs.String()), orDash(part.HostReservedCPUs.String()),
			orDash(part.MemoryNodes.String()), reservedSummary(part.Memory), hugepagesSummary(part.Memory),
			part.NodeName, addr, k.Port, k.HealthzPort, portOrDash(k.ReadOnlyPort), part.Color)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing plan: %w", err)
	}
	for _, part := range p.Partitions {
		k := part.Kubelet
		fmt.Fprintf(w, "\n%s:\n", part.Name)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  labels\t%s\n", labelsSummary(part.Labels))
		if len(part.Taints) > 0 {
			fmt.Fprintf(tw, "  taints\t%s\n", strings.Join(taintStrings(part.Taints), ", "))
		}
		fmt.Fprintf(tw, "  policies\tcpu %s, memory %s, topology %s/%s%s\n", k.CPUManagerPolicy, k.MemoryManagerPolicy,
			k.TopologyManagerPolicy, k.TopologyManagerScope, optionsSummary(k.CPUManagerPolicyOptions, k.TopologyManagerOptions))
		fmt.Fprintf(tw, "  reserved memory\tkube %s, system %s, eviction %s\n",
			units.FormatBytes(k.KubeReservedMemory), units.FormatBytes(k.SystemReservedMemory), units.FormatBytes(k.EvictionHardMemory))
		if es := part.EphemeralStorage; es != nil {
			fmt.Fprintf(tw, "  ephemeral-storage\t%s of %s on %s (%s)\n", units.FormatBytes(es.ShareBytes),
				units.FormatBytes(es.CapacityBytes), es.Path, sharedSummary(es.SharedWith))
		}
		if pids := part.PIDs; pids != nil {
			fmt.Fprintf(tw, "  pids\t%d of %d\n", pids.Share, pids.Limit)
		}
		if n := part.Network; n != nil {
			via := ""
			if n.Gateway.IsValid() {
				via = " via " + n.Gateway.String()
			}
			fmt.Fprintf(tw, "  network\tnamespace %s: %s %s%s (host link %s)\n", n.Namespace, n.Interface, n.Address, via, n.HostLink)
			for _, d := range n.Devices {
				fmt.Fprintf(tw, "  device\t%s (%s)\n", d.Name, d.PCI)
			}
		}
		fmt.Fprintf(tw, "  kubelet\t%s --config %s --root-dir %s\n", k.Binary, k.ConfigPath, k.RootDir)
		fmt.Fprintf(tw, "  runtime\t%s %s\n", part.Runtime.Kind, part.Runtime.Endpoint)
		fmt.Fprintf(tw, "  allocator\t%s%s\n", part.Allocator.Socket, allocatorMode(part.Allocator))
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("writing plan: %w", err)
		}
	}
	if len(p.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, warning := range p.Warnings {
			fmt.Fprintf(w, "  - %s\n", warning)
		}
	}
	return nil
}

// networkSummary is the plan's network layout in one line.
func networkSummary(n Network) string {
	switch {
	case n.Mode == NetworkHost:
		return "host mode: every partition shares the host's namespace and address"
	case n.Uplink == UplinkBridge:
		nat := ""
		if n.NAT {
			nat = ", masqueraded when leaving the host"
		}
		return fmt.Sprintf("a namespace per partition on bridge %s %s (%s%s), MTU %s", n.Bridge, n.HostAddress, n.Subnet, nat, mtuSummary(n.MTU))
	default:
		return fmt.Sprintf("a namespace per partition, macvlan on %s (subnet %s), MTU %s", n.Parent, n.Subnet, mtuSummary(n.MTU))
	}
}

func mtuSummary(mtu int) string {
	if mtu == 0 {
		return "of the uplink"
	}
	return fmt.Sprint(mtu)
}

// allocatorMode says who places the partition's containers.
func allocatorMode(a Allocator) string {
	switch a.Mode {
	case config.AllocatorModeNRI:
		return fmt.Sprintf(" (nri mode: places containers through %s, topology %s/%s)", a.NRISocket, a.TopologyPolicy, a.TopologyScope)
	case config.AllocatorModeKubelet:
		return " (kubelet mode: kubelet's managers place containers)"
	}
	return ""
}

// hostShares is what the host keeps of the shared resources, when planned.
func hostShares(p *Plan) string {
	if len(p.Partitions) == 0 || p.Partitions[0].PIDs == nil {
		return ""
	}
	return fmt.Sprintf("\tephemeral-storage %s of /\tpids %d", units.FormatBytes(p.Host.Shares.EphemeralStorageBytes), p.Host.Shares.PIDs)
}

// sharedSummary says who else draws on a partition's filesystem.
func sharedSummary(others []string) string {
	if len(others) == 0 {
		return "its own filesystem"
	}
	return "shared with " + strings.Join(others, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func portOrDash(p int) string {
	if p == 0 {
		return "-"
	}
	return fmt.Sprint(p)
}

// reservedSummary: "1100Mi@0" (size at node), "-" for none.
func reservedSummary(mem []NodeMemory) string {
	var parts []string
	for _, nm := range mem {
		if nm.ReservedBytes > 0 {
			parts = append(parts, fmt.Sprintf("%s@%d", units.FormatBytes(nm.ReservedBytes), nm.Node))
		}
	}
	return orDash(strings.Join(parts, ","))
}

// hugepagesSummary: "4×1Gi@0-1" grouped by size and count.
func hugepagesSummary(mem []NodeMemory) string {
	type key struct{ size, count uint64 }
	nodes := map[key]bitmask.NodeSet{}
	var keys []key
	for _, nm := range mem {
		for _, h := range nm.Hugepages {
			k := key{h.PageSize, h.Count}
			if _, ok := nodes[k]; !ok {
				keys = append(keys, k)
			}
			nodes[k] = nodes[k].Add(nm.Node)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].size != keys[j].size {
			return keys[i].size < keys[j].size
		}
		return keys[i].count < keys[j].count
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d×%s@%s", k.count, units.FormatBytes(k.size), nodes[k]))
	}
	return orDash(strings.Join(parts, ","))
}

func labelsSummary(labels map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(labels) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ", ")
}

func optionsSummary(maps ...map[string]string) string {
	var parts []string
	for _, m := range maps {
		for _, k := range sortedKeys(m) {
			parts = append(parts, k+"="+m[k])
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
