package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/nodeview"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the partitions' units, cpusets, memory, health, Kubernetes Nodes and drift; exit 0 healthy or offline, 1 degraded or not applied, 2 error",
		Description: "Per partition: its units' ActiveState/SubState, the CPUs and memory nodes\n" +
			"in force (from the cgroup files), memory and hugepages per node, kubelet health\n" +
			"(GET /healthz on its healthz port) and allocator health (GET /v1/healthz on its\n" +
			"socket), and its Kubernetes Node read from the API server: Ready or not, and\n" +
			"its allocatable and capacity. The Node is read with the partition's own\n" +
			"kubelet kubeconfig (the Node authorizer lets a kubelet read its own Node), or\n" +
			"with --kubeconfig for all of them; --no-api skips it. For the host: the\n" +
			"reserved CPUs in force, and the drift between what was applied and what is\n" +
			"live. Exit status: 0 healthy, or offline (a --root no systemd runs on, with\n" +
			"nothing wrong in what it holds); 1 degraded or nothing applied; 2 status\n" +
			"itself failed.",
		Flags: append(hostFlags(),
			&cli.DurationFlag{Name: "probe-timeout", Value: status.DefaultProbeTimeout, Usage: "timeout of each health check, the API server's included"},
			&cli.StringFlag{Name: "kubeconfig", Usage: "read every partition's Node with this kubeconfig (an admin's, on this machine) instead of each partition's kubelet kubeconfig"},
			&cli.BoolFlag{Name: "no-api", Usage: "do not ask the API server about the partitions' Nodes"},
		),
		Action: func(c *cli.Context) error {
			return onHost(c, true, func(h host) error {
				st, err := status.Read(c.Context, status.Options{Root: h.root, Sysfs: h.sysfs, Systemd: h.systemd, Offline: h.offline,
					ProbeTimeout: c.Duration("probe-timeout"), Kubeconfig: c.String("kubeconfig"), NoAPI: c.Bool("no-api")})
				if err != nil {
					return fmt.Errorf("status: %w", err)
				}
				if !h.offline && st.Health != status.NotApplied {
					st.Config = reviewConfig(c, h.root)
					if w := configWarning(st.Config, st.Generation); w != "" {
						st.Warnings = append(st.Warnings, w)
					}
				}
				if structured(h.format) {
					err = writeData(c.App.Writer, h.format, kindStatus, st)
				} else {
					err = writeStatus(c.App.Writer, st, tableWidth(h.format))
				}
				if err != nil {
					return err
				}
				return statusExit(st.Health)
			})
		},
	}
}

// statusExit is status's exit status for its health, as docs/apply.md's
// table has it: 0 healthy, and offline too (a root no systemd runs on
// with nothing wrong in what it holds: what only a live host could say
// is no fault found); 1 degraded or nothing applied.
func statusExit(h status.Health) error {
	switch h {
	case status.Healthy, status.Offline:
		return nil
	}
	return exitError{code: 1}
}

// writeStatus is status's tables; width is the default table's budget
// (output.Width), 0 for -o wide's every column.
func writeStatus(w io.Writer, st *status.Status, width int) error {
	var b strings.Builder
	health := strings.ToUpper(string(st.Health))
	if st.Health == status.NotApplied {
		fmt.Fprintf(&b, "%s: %s; %s\n", health, strings.Join(st.Problems, "; "), cgroupModeText(st.CgroupMode))
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "%s: generation %d applied %s, %s\n",
		health, st.Generation, st.AppliedAt.Format("2006-01-02 15:04:05Z07:00"), cgroupModeText(st.CgroupMode))
	if st.Offline != "" {
		// What the health "offline" did not read, as the JSON's "offline".
		fmt.Fprintf(&b, "%s\n", st.Offline)
	}
	fmt.Fprintf(&b, "host: reserved CPUs %s, in force (system.slice AllowedCPUs) %s\n\n", orDash(st.Host.ReservedCPUs), orDash(st.Host.InForce))
	// The health of each partition stays in the default table; where it
	// runs and what it uses are -o wide's, as kubectl get pods -o wide
	// adds the node and IP.
	parts := output.NewTable(width == 0, output.Column{Name: "PARTITION"}, output.Column{Name: "SLICE", Wide: true},
		output.Column{Name: "CPUS IN FORCE"}, output.Column{Name: "MEMS IN FORCE"}, output.Column{Name: "KUBELET"},
		output.Column{Name: "ALLOCATOR"}, output.Column{Name: "CAPACITY", Wide: true}, output.Column{Name: "CPU TIME", Wide: true},
		output.Column{Name: "WORKING SET", Wide: true}, output.Column{Name: "DAEMONS", Wide: true}, output.Column{Name: "NODE"})
	cpuBudget := 0
	if width > 0 {
		cpuBudget = output.ListWidth
	}
	for _, p := range st.Partitions {
		cpu, ws := usageWords(p.Usage)
		machine := "-"
		if m := p.Machine; m != nil {
			// As its kubelet publishes it: what it is shown in its namespace.
			cpus, _ := bitmask.ParseCPUList(m.CPUs)
			machine = fmt.Sprintf("cpu=%d,memory=%s", cpus.Len(), units.FormatBytes(m.MemTotalBytes))
		}
		parts.Row(p.Name, p.Slice, output.Abbreviate(orDash(p.EffectiveCPUs), cpuBudget), orDash(p.EffectiveMems),
			probeWord(p.Kubelet), probeWord(p.Allocator), machine, cpu, ws, daemonsWord(p.Daemons), nodeWord(p.Node))
	}
	parts.Write(&b)
	b.WriteString("\n")
	if writeNetworkStatus(&b, st) {
		b.WriteString("\n")
	}
	unitTable := output.NewTable(width == 0, output.Column{Name: "UNIT"}, output.Column{Name: "PARTITION"}, output.Column{Name: "ACTIVE"},
		output.Column{Name: "SUB"}, output.Column{Name: "ENABLED"}, output.Column{Name: "CPU TIME", Wide: true}, output.Column{Name: "WORKING SET", Wide: true})
	for _, u := range st.Host.Units {
		unitTable.Row(u.Name, "-", u.ActiveState, u.SubState, orDash(u.Enabled), "-", "-")
	}
	for _, p := range st.Partitions {
		for _, u := range p.Units {
			cpu, ws := usageWords(u.Usage)
			unitTable.Row(u.Name, p.Name, u.ActiveState, u.SubState, orDash(u.Enabled), cpu, ws)
		}
	}
	unitTable.Write(&b)
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tMEMORY TOTAL\tMEMORY FREE\tHUGEPAGES (TOTAL/FREE)")
	for _, n := range st.Host.Nodes {
		var hp []string
		for _, h := range n.Hugepages {
			hp = append(hp, fmt.Sprintf("%s %d/%d", units.HugepageResource(h.PageSize), h.Total, h.Free))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", n.Node, units.FormatBytes(n.TotalBytes), units.FormatBytes(n.FreeBytes), orDash(strings.Join(hp, ", ")))
	}
	tw.Flush()
	for _, list := range []struct {
		title string
		items []string
	}{{"problems", st.Problems}, {"warnings", st.Warnings}} {
		if len(list.items) > 0 {
			fmt.Fprintf(&b, "\n%s:\n", list.title)
			for _, p := range list.items {
				fmt.Fprintf(&b, "  - %s\n", p)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cgroupModeText is the cgroup mode as status's first line says it. An
// offline root may have none to read (no record that says it, no
// sys/fs/cgroup below it): "unknown" then, where "cgroup mode " with
// nothing after it read as a bug.
func cgroupModeText(m transaction.CgroupMode) string {
	if m == "" {
		return "cgroup mode unknown"
	}
	return "cgroup mode " + string(m)
}

// writeNetworkStatus writes each partition's namespace, its address and
// the devices it holds (namespace mode); false when no partition has one.
func writeNetworkStatus(b *strings.Builder, st *status.Status) bool {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	any := false
	for _, p := range st.Partitions {
		n := p.Network
		if n == nil {
			continue
		}
		if !any {
			fmt.Fprintln(tw, "NAMESPACE\tPARTITION\tADDRESS\tLINK\tDEVICES")
			any = true
		}
		link := "up"
		switch {
		case !n.Present:
			link = "no namespace"
		case !n.Up:
			link = "down"
		}
		var devs []string
		for _, d := range n.Devices {
			if d.InNamespace {
				devs = append(devs, d.Name)
			} else {
				devs = append(devs, d.Name+" (not there)")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n.Namespace, p.Name, orDash(strings.Join(n.Addresses, ", ")), link, orDash(strings.Join(devs, ", ")))
	}
	tw.Flush()
	return any
}

func probeWord(p status.Probe) string {
	if p.OK {
		return "ok"
	}
	return "FAIL"
}

// nodeWord is the NODE column: the Node's name and Ready, NotReady, or -
// when it was not read (the problems, or the JSON's reason, say why).
func nodeWord(n status.NodeStatus) string {
	state := "-"
	switch {
	case n.Ready:
		state = "Ready"
	case n.Known():
		state = "NotReady"
	}
	if n.KubeletVersion != "" {
		// Its kubelet's version, as kubectl get nodes shows it: each
		// partition's own during a canary.
		state += " " + n.KubeletVersion
	}
	if n.Name == "" {
		return state
	}
	return n.Name + " " + state
}

// usageWords are the CPU TIME and WORKING SET columns of a usage, "-"
// when it was not read.
func usageWords(u *nodeview.Usage) (cpu, workingSet string) {
	if u == nil {
		return "-", "-"
	}
	return fmt.Sprintf("%.1fs", float64(u.CPUNanoseconds)/1e9), units.FormatBytes(u.MemoryWorkingSetBytes)
}

// daemonsWord is the DAEMONS column: the working set of the partition's
// own services against its kube_reserved_memory ("120Mi/500Mi"), "-"
// when it was not read.
func daemonsWord(d *status.DaemonsUsage) string {
	if d == nil {
		return "-"
	}
	if d.KubeReservedMemoryBytes == nil {
		return units.FormatBytes(d.MemoryWorkingSetBytes)
	}
	return units.FormatBytes(d.MemoryWorkingSetBytes) + "/" + units.FormatBytes(*d.KubeReservedMemoryBytes)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
