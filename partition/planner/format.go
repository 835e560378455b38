package planner

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// WriteTable prints a plan for people: the host line, one row per
// partition, each partition's labels and paths, then the warnings. The
// JSON form (Plan itself) is the one for programs. width is the budget
// of the default table (output.Width): the partitions' table leaves the
// columns kubectl's -o wide would add out and shortens long CPU lists
// ("2,4,6 + 51 more..."), the lines of keys and values wrap; width 0
// (-o wide) prints every column and every line whole.
func WriteTable(w io.Writer, p *Plan, width int) error {
	var b strings.Builder
	writeKeyValues(&b, "", width, [][2]string{
		{"HOST", fmt.Sprintf("reserved CPUs %s  memory nodes %s  excluded nodes %s%s",
			orDash(p.Host.ReservedCPUs.String()), orDash(p.Host.MemoryNodes.String()), orDash(p.Host.ExcludedNodes.String()), hostShares(p))},
		{"NETWORK", networkSummary(p.Network)},
	})
	b.WriteString("\n")
	// The columns a reviewer reads first stay; the rest are -o wide's. A
	// CPU list of interleaved numbering (2,4,6,…) is cut so that the
	// table still fits; -o wide and the JSON have it whole.
	t := output.NewTable(width == 0,
		output.Column{Name: "PARTITION"}, output.Column{Name: "SLICE", Wide: true}, output.Column{Name: "NODES"},
		output.Column{Name: "CPUS"}, output.Column{Name: "HOST CPUS", Wide: true}, output.Column{Name: "MEMORY NODES"},
		output.Column{Name: "RESERVED", Wide: true}, output.Column{Name: "HUGEPAGES"}, output.Column{Name: "NODE NAME"},
		output.Column{Name: "ADDRESS"}, output.Column{Name: "PORT/HEALTHZ/RO", Wide: true}, output.Column{Name: "COLOR", Wide: true})
	cpus := 0
	if width > 0 {
		cpus = output.ListWidth
	}
	for _, part := range p.Partitions {
		k := part.Kubelet
		addr := "host's"
		if part.Network != nil {
			addr = part.Network.Address.Addr().String()
		}
		t.Row(part.Name, part.Slice, part.Nodes.String(), output.Abbreviate(orDash(part.CPUs.String()), cpus), orDash(part.HostReservedCPUs.String()),
			orDash(part.MemoryNodes.String()), reservedSummary(part.Memory), hugepagesSummary(part.Memory),
			part.NodeName, addr, fmt.Sprintf("%d/%d/%s", k.Port, k.HealthzPort, portOrDash(k.ReadOnlyPort)), part.Color)
	}
	if err := t.Write(&b); err != nil {
		return fmt.Errorf("writing plan: %w", err)
	}
	for _, part := range p.Partitions {
		k := part.Kubelet
		fmt.Fprintf(&b, "\n%s:\n", part.Name)
		kv := [][2]string{{"labels", labelsSummary(part.Labels)}}
		if len(part.Taints) > 0 {
			kv = append(kv, [2]string{"taints", strings.Join(taintStrings(part.Taints), ", ")})
		}
		kv = append(kv, [2]string{"policies", fmt.Sprintf("cpu %s, memory %s, topology %s/%s%s", k.CPUManagerPolicy, k.MemoryManagerPolicy,
			k.TopologyManagerPolicy, k.TopologyManagerScope, optionsSummary(k.CPUManagerPolicyOptions, k.TopologyManagerOptions))})
		kv = append(kv, [2]string{"reserved memory", fmt.Sprintf("kube %s, system %s, eviction %s",
			units.FormatBytes(k.KubeReservedMemory), units.FormatBytes(k.SystemReservedMemory), units.FormatBytes(k.EvictionHardMemory))})
		if es := part.EphemeralStorage; es != nil {
			kv = append(kv, [2]string{"ephemeral-storage", fmt.Sprintf("%s of %s on %s (%s)", units.FormatBytes(es.ShareBytes),
				units.FormatBytes(es.CapacityBytes), es.Path, sharedSummary(es.SharedWith))})
		}
		if pids := part.PIDs; pids != nil {
			kv = append(kv, [2]string{"pids", fmt.Sprintf("%d of %d", pids.Share, pids.Limit)})
		}
		if n := part.Network; n != nil {
			via := ""
			if n.Gateway.IsValid() {
				via = " via " + n.Gateway.String()
			}
			kv = append(kv, [2]string{"network", fmt.Sprintf("namespace %s: %s %s%s (host link %s)", n.Namespace, n.Interface, n.Address, via, n.HostLink)})
			for _, d := range n.Devices {
				kv = append(kv, [2]string{"device", fmt.Sprintf("%s (%s)", d.Name, d.PCI)})
			}
		}
		kv = append(kv, [2]string{"kubelet", fmt.Sprintf("%s --config %s --root-dir %s", k.Binary, k.ConfigPath, k.RootDir)},
			[2]string{"runtime", fmt.Sprintf("%s %s", part.Runtime.Kind, part.Runtime.Endpoint)},
			[2]string{"allocator", part.Allocator.Socket + allocatorMode(part.Allocator)})
		writeKeyValues(&b, "  ", width, kv)
	}
	if len(p.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, warning := range p.Warnings {
			fmt.Fprintf(&b, "  - %s\n", warning)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing plan: %w", err)
	}
	return nil
}

// writeKeyValues writes each key, indented and padded to the longest
// key and two spaces, then its value; a value longer than width wraps
// at a space or comma, under the values (width 0: never).
func writeKeyValues(b *strings.Builder, indent string, width int, kv [][2]string) {
	keyWidth := 0
	for _, e := range kv {
		keyWidth = max(keyWidth, utf8.RuneCountInString(e[0]))
	}
	col := len(indent) + keyWidth + 2
	for _, e := range kv {
		fmt.Fprintf(b, "%s%s%s%s\n", indent, e[0], strings.Repeat(" ", keyWidth+2-utf8.RuneCountInString(e[0])), output.Wrap(e[1], col, col, width))
	}
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
	return fmt.Sprintf("  ephemeral-storage %s of /  pids %d", units.FormatBytes(p.Host.Shares.EphemeralStorageBytes), p.Host.Shares.PIDs)
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
