package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/hostfacts"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner"
)

func discoverCommand() *cli.Command {
	return &cli.Command{
		Name:  "discover",
		Usage: "show the machine's NUMA topology as read from sysfs",
		Description: "Reads sockets, NUMA nodes, cores, CPUs, per-node memory and hugepages, node\n" +
			"distances and PCI locality from --sysfs (default /sys; a dump's sys/ works too).\n" +
			"Prints a tree, or with --output json the schema documented in docs/discover.md.\n" +
			"Anything discovery had to assume is listed under warnings.\n\n" +
			"--host-facts-out FILE also writes what a plan takes from this host besides\n" +
			"sysfs (its host name, pid limit, the filesystems of / and of the kubelet root\n" +
			"dirs --config plans, its network interfaces), JSON or, for FILE.toml, TOML:\n" +
			"plan, render and apply --host-facts FILE with a dump of this sysfs then make\n" +
			"this host's plan on any machine (docs/plan.md).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "host-facts-out", Usage: "also write this host's facts, for plans made elsewhere (--host-facts), to `FILE` (.json or .toml)"},
		},
		Action: func(c *cli.Context) error {
			format, err := outputFormat(c)
			if err != nil {
				return err
			}
			if out := c.String("host-facts-out"); out != "" {
				if err := writeHostFacts(c, out); err != nil {
					return err
				}
			}
			topo, err := numa.NewFS(globalString(c, "sysfs")).WithContext(c.Context).Discover()
			if err != nil {
				return fmt.Errorf("discover: %w", err)
			}
			// Warnings are in the output (the tree's, the JSON's), once.
			if structured(format) {
				return writeData(c.App.Writer, format, kindTopology, topo)
			}
			return writeTopologyTree(c.App.Writer, topo, tableWidth(format))
		},
	}
}

// writeHostFacts plans with --config on this host, keeping every answer
// the plan took from it, and writes them to file: the facts with which a
// plan made elsewhere is this one.
func writeHostFacts(c *cli.Context, file string) error {
	name, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("--host-facts-out: reading the host name: %w", err)
	}
	rec := &hostfacts.Recorder{Host: hostfacts.Live}
	if _, _, err := loadPlanWith(c, rec, func() (string, error) { return name, nil }); err != nil {
		return fmt.Errorf("--host-facts-out: the facts are those a plan of --config reads, and it does not plan: %w", err)
	}
	data, err := planner.NewFactsFile(name, rec.Facts()).Marshal(file)
	if err != nil {
		return fmt.Errorf("--host-facts-out: %w", err)
	}
	// The one atomic write: a link planted at file (#38) is replaced, not
	// written through.
	if err := fsutil.WriteFile(file, data, 0o644); err != nil {
		return fmt.Errorf("--host-facts-out: %w", err)
	}
	return nil
}

// writeTopologyTree prints socket → node → cores, then nodes without CPUs
// (memory-only, GPU memory), then online CPUs outside any node or socket,
// then the distance matrix, then warnings.
func writeTopologyTree(out io.Writer, t *numa.Topology, width int) error {
	p := &printer{w: out, width: width}
	cores := 0
	for _, s := range t.Sockets {
		cores += len(s.Cores)
	}
	p.line(0, "machine: %s, %s, %s, %s", plural(len(t.Sockets), "socket"), plural(len(t.Nodes), "NUMA node"),
		plural(cores, "core"), plural(t.Online.Len(), "online CPU"))
	p.line(1, "CPUs online %s; offline %s; present %s; possible %s", orNone(t.Online), orNone(t.Offline), orNone(t.Present), orNone(t.Possible))

	var inNodes, inSockets bitmask.CPUSet
	for _, n := range t.Nodes {
		inNodes = inNodes.Union(n.CPUs)
	}
	for _, s := range t.Sockets {
		inSockets = inSockets.Union(s.CPUs)
	}

	shown := map[int]bool{}
	for _, s := range t.Sockets {
		p.line(0, "socket %d: %s, CPUs %s, nodes %s", s.ID, plural(len(s.Cores), "core"), s.CPUs, orNoneNodes(s.Nodes))
		for _, id := range s.Nodes.IDs() {
			n, _ := t.Node(id)
			var nodeCores []numa.Core
			for _, c := range s.Cores {
				if c.Node == id {
					nodeCores = append(nodeCores, c)
				}
			}
			p.node(t, n, s.CPUs.Intersect(n.CPUs), nodeCores, shown[id])
			shown[id] = true
		}
		// By CPU, not by core: a core counts as the node of its lowest
		// CPU, and a sibling may still be in no node.
		if loose := s.CPUs.Difference(inNodes); !loose.IsEmpty() {
			p.line(1, "in no node: CPUs %s", loose)
		}
	}
	var rest []numa.Node
	for _, n := range t.Nodes {
		if !shown[n.ID] {
			rest = append(rest, n)
		}
	}
	if len(rest) > 0 {
		p.line(0, "nodes without a socket:")
		for i := range rest {
			p.node(t, &rest[i], rest[i].CPUs, nil, false)
		}
	}
	// Online CPUs without a node cannot be given to any partition; without
	// a socket they had no topology files. Both stay with the host.
	if loose := t.Online.Difference(inNodes); !loose.IsEmpty() {
		p.line(0, "online CPUs in no node: %s", loose)
	}
	if loose := t.Online.Difference(inSockets); !loose.IsEmpty() {
		p.line(0, "online CPUs in no socket: %s", loose)
	}
	p.distanceMatrix(t)
	unlocal := 0
	for _, d := range t.PCI {
		if d.Node < 0 {
			unlocal++
		}
	}
	if len(t.PCI) > 0 {
		p.line(0, "PCI: %s, %d without NUMA locality (numa_node -1)", plural(len(t.PCI), "device"), unlocal)
	}
	if len(t.Warnings) > 0 {
		p.line(0, "warnings:")
		for _, w := range t.Warnings {
			p.raw(1, "- %s", w)
		}
	}
	return p.err
}

type printer struct {
	w     io.Writer
	width int // the budget of a line (output.Width), 0 for -o wide
	err   error
}

// line prints a line of the tree at depth, wrapped at the width after a
// space or a comma (a CPU list of interleaved numbering is longer than
// any terminal), the rest 4 columns further in than the line.
func (p *printer) line(depth int, format string, args ...any) {
	indent := 2 * depth
	p.raw(depth, "%s", output.Wrap(fmt.Sprintf(format, args...), indent, indent+4, p.width))
}

// raw prints a line unwrapped: the distance matrix, as numactl's, and
// the warnings, sentences that a terminal wraps as well as we would.
func (p *printer) raw(depth int, format string, args ...any) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, "%s%s\n", strings.Repeat("  ", depth), fmt.Sprintf(format, args...))
}

// node prints one node under a socket; a node shared by sockets is
// described in full only the first time.
func (p *printer) node(t *numa.Topology, n *numa.Node, cpus bitmask.CPUSet, cores []numa.Core, again bool) {
	head := fmt.Sprintf("node %d (%s): CPUs %s", n.ID, n.Kind, orNone(cpus))
	if again {
		p.line(1, "%s (node shown above)", head)
		return
	}
	p.line(1, "%s", head)
	if len(cores) > 0 {
		p.line(2, "%s", describeCores(cores))
	}
	if off := offlineCPUs(t, n.ID); !off.IsEmpty() {
		p.line(2, "offline CPUs: %s", off)
	}
	p.line(2, "memory: %s total, %s free", humanBytes(n.MemoryBytes), humanBytes(n.FreeBytes))
	if len(n.Hugepages) > 0 {
		sizes := make([]string, len(n.Hugepages))
		for i, h := range n.Hugepages {
			sizes[i] = fmt.Sprintf("%s %d total/%d free", units.FormatBytes(h.PageSize), h.Total, h.Free)
			if h.Surplus > 0 {
				sizes[i] += fmt.Sprintf("/%d surplus", h.Surplus)
			}
		}
		p.line(2, "hugepages: %s", strings.Join(sizes, ", "))
	}
	if len(n.Distances) == len(t.Nodes) {
		d := make([]string, len(n.Distances))
		for i, v := range n.Distances {
			d[i] = strconv.Itoa(t.Nodes[i].ID) + ":" + distance(v)
		}
		p.line(2, "distances: %s", strings.Join(d, " "))
	}
	p.pci(t, n.ID)
}

// distanceMatrix prints the node distances as numactl --hardware does
// (numactl.c print_distances): "node distances:", a header "node " and
// "% 3d " per node, then for each node "% 3d: " and "% 3d " per distance,
// trailing blanks included, so that the lines diff cleanly against
// numactl's. Like numactl it lists every node directory, ascending, and
// says "No distance information available." when no node has a distance
// file. A distance sysfs does not give is "?" here, where numactl prints 0.
func (p *printer) distanceMatrix(t *numa.Topology) {
	known := false
	for _, n := range t.Nodes {
		known = known || n.Distances != nil
	}
	if !known {
		p.line(0, "No distance information available.")
		return
	}
	p.line(0, "node distances:")
	var b strings.Builder
	b.WriteString("node ")
	for _, n := range t.Nodes {
		fmt.Fprintf(&b, "% 3d ", n.ID)
	}
	p.raw(0, "%s", b.String())
	for _, n := range t.Nodes {
		b.Reset()
		fmt.Fprintf(&b, "% 3d: ", n.ID)
		for i := range t.Nodes {
			if i < len(n.Distances) && n.Distances[i] >= 0 {
				fmt.Fprintf(&b, "% 3d ", n.Distances[i])
			} else {
				b.WriteString("  ? ")
			}
		}
		p.raw(0, "%s", b.String())
	}
}

// describeCores lists SMT sibling groups; without SMT a count says it all.
func describeCores(cores []numa.Core) string {
	groups := make([]string, len(cores))
	smt := false
	for i, c := range cores {
		groups[i] = c.CPUs.String()
		smt = smt || c.CPUs.Len() > 1
	}
	if !smt {
		return fmt.Sprintf("cores: %d, one CPU each", len(cores))
	}
	return fmt.Sprintf("cores: %d, SMT siblings %s", len(cores), strings.Join(groups, " "))
}

func distance(v int) string {
	if v < 0 {
		return "?"
	}
	return strconv.Itoa(v)
}

// pci prints the node's local devices: a count per class and the
// addresses of the devices placement cares about (NICs, storage, GPUs).
func (p *printer) pci(t *numa.Topology, node int) {
	var local []numa.PCIDevice
	for _, d := range t.PCI {
		if d.Node == node {
			local = append(local, d)
		}
	}
	if len(local) == 0 {
		return
	}
	byClass := map[string]int{}
	var notable []string
	for _, d := range local {
		name := numa.PCIClassName(d.Class)
		switch name {
		case "":
			name = "class unknown"
		case "network", "storage", "display", "accelerator", "processor":
			what := d.Address + " " + name
			for _, n := range d.Net {
				what += " " + n.Name
				if n.Master != "" {
					what += " (port of " + n.Master + ")"
				}
			}
			if d.PhysFn != "" {
				what += " (VF of " + d.PhysFn + ")"
			}
			notable = append(notable, what)
		}
		byClass[name]++
	}
	classes := make([]string, 0, len(byClass))
	for name, n := range byClass {
		classes = append(classes, fmt.Sprintf("%s %d", name, n))
	}
	sort.Strings(classes)
	p.line(2, "PCI devices (%d): %s", len(local), strings.Join(classes, ", "))
	for _, n := range notable {
		p.line(3, "%s", n)
	}
}

func offlineCPUs(t *numa.Topology, node int) bitmask.CPUSet {
	var ids []int
	for _, c := range t.CPUs {
		if c.Node == node && !c.Online {
			ids = append(ids, c.ID)
		}
	}
	return bitmask.NewCPUSet(ids...)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func orNone(s bitmask.CPUSet) string {
	if s.IsEmpty() {
		return "none"
	}
	return s.String()
}

func orNoneNodes(s bitmask.NodeSet) string {
	if s.IsEmpty() {
		return "none"
	}
	return s.String()
}

// humanBytes prints a size for people: 125.6 GiB. JSON keeps bytes.
func humanBytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return strconv.FormatUint(b, 10) + " B"
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
