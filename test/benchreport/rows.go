package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// row is one line of a two-column table.
type row struct{ what, figure string }

// fig builds a row from figures read with rs.get: when one is missing
// the row says which, instead of printing zeros.
func fig(what string, format func(err *error) string) row {
	var err error
	s := format(&err)
	if err != nil {
		return row{what, "not measured: " + err.Error()}
	}
	return row{what, s}
}

const (
	nsPerMS = 1e6
	nsPerUS = 1e3
	nsPerS  = 1e9
)

func rowsHost(rs results) []row {
	return []row{
		fig("discover a 256-CPU, 8-node POWER9 dump (`numa`, `-bench Discover`)", func(e *error) string {
			return fmt.Sprintf("%.1f ms", rs.get(e, "Discover/hwloc-256ppc-8n8s4t", "ns/op")/nsPerMS)
		}),
		fig("discover a 4-CPU dump whose `cpu/online` claims 0-65535 (`-bench DiscoverHugeRangeClaim`)", func(e *error) string {
			return fmt.Sprintf("%.2f ms", rs.get(e, "DiscoverHugeRangeClaim/0-65535", "ns/op")/nsPerMS)
		}),
		fig("plan an 8-node EPYC / a 17-node ia64 (`partition/planner`, `-bench NewPlan`)", func(e *error) string {
			return fmt.Sprintf("%.2f ms / %.1f ms", rs.get(e, "NewPlan/hwloc-64amd64-4s2n4ca2co", "ns/op")/nsPerMS,
				rs.get(e, "NewPlan/hwloc-128ia64-17n4s2c", "ns/op")/nsPerMS)
		}),
		fig("render the seed machine / an 8-node EPYC (`slices/render`, `-bench Render`)", func(e *error) string {
			return fmt.Sprintf("%.1f ms / %.1f ms", rs.get(e, "Render/seed-2socket", "ns/op")/nsPerMS,
				rs.get(e, "Render/epyc-8node", "ns/op")/nsPerMS)
		}),
		fig("apply 8 partitions / a re-apply that changes nothing, real systemd (`slices/apply`, root)", func(e *error) string {
			return fmt.Sprintf("%.2f s / %.2f s", rs.get(e, "Apply8Partitions", "ns/op")/nsPerS, rs.get(e, "ReapplyNoop", "ns/op")/nsPerS)
		}),
	}
}

// bigHosts are the columns of the big hosts' table: numatest's shapes
// (numa/numatest), by benchmark sub-name.
var bigHosts = []struct{ name, header string }{
	{"2s512t-snc3", "2 × 128 cores × 2 threads, SNC3: 6 nodes"},
	{"2s512t-nps4", "2 × 128 cores × 2 threads, NPS4: 8 nodes"},
	{"gb200-34n", "GB200 tray: 2 Grace × 72 cores, 32 GPU-memory nodes"},
}

func bigHostsHeader() []string {
	h := []string{"stage"}
	for _, s := range bigHosts {
		h = append(h, s.header)
	}
	return h
}

// bigHostsRows are the stages from discovery to apply, one column a
// shape; a figure a run lacks says which.
func bigHostsRows(rs results) [][]string {
	stages := []struct {
		what   string
		figure func(e *error, shape string) string
	}{
		{"discover its sysfs tree (`numa`, `-bench Discover`)", func(e *error, s string) string {
			return duration(rs.get(e, "Discover/"+s, "ns/op"))
		}},
		{"plan it with its config (`partition/planner`, `-bench NewPlan`)", func(e *error, s string) string {
			return duration(rs.get(e, "NewPlan/"+s, "ns/op"))
		}},
		{"render the plan (`slices/render`, `-bench Render`)", func(e *error, s string) string {
			return duration(rs.get(e, "Render/"+s, "ns/op"))
		}},
		{"the bundle: units / files", func(e *error, s string) string {
			b := "ApplyBigHosts/" + s + "/plan=fresh"
			return fmt.Sprintf("%.0f / %.0f", rs.get(e, b, "units"), rs.get(e, b, "files"))
		}},
		{"apply's steps from an empty host / from one where it is applied, pure (`slices/apply`, `-bench ApplyBigHosts`)", func(e *error, s string) string {
			b := "ApplyBigHosts/" + s
			return duration(rs.get(e, b+"/plan=fresh", "ns/op")) + " / " + duration(rs.get(e, b+"/plan=noop", "ns/op"))
		}},
		{"apply --dry-run, offline, on an empty root: the tree read, the steps, the diff", func(e *error, s string) string {
			return duration(rs.get(e, "ApplyBigHosts/"+s+"/dry-run", "ns/op"))
		}},
	}
	var out [][]string
	for _, st := range stages {
		line := []string{st.what}
		for _, s := range bigHosts {
			r := fig("", func(e *error) string { return st.figure(e, s.name) })
			line = append(line, r.figure)
		}
		out = append(out, line)
	}
	return out
}

// ratioNodes and ratioPolicies are the columns and rows of the table of
// BenchmarkRatio's sets (random/NN/policy); none is timed up to 8 nodes.
var (
	ratioNodes    = []int{2, 4, 8, 16, 62}
	ratioPolicies = []string{"best-effort", "restricted", "single-numa-node", "none"}
)

func ratioHeader() []string {
	h := []string{"policy"}
	for _, n := range ratioNodes {
		h = append(h, fmt.Sprintf("%d nodes", n))
	}
	return h
}

func ratioRows(rs results) [][]string {
	var out [][]string
	for _, pol := range ratioPolicies {
		line := []string{pol}
		for _, n := range ratioNodes {
			name := fmt.Sprintf("Ratio/random/%02d/%s", n, pol)
			if _, ok := rs[name]; !ok && pol == "none" && n > 8 {
				line = append(line, "—")
				continue
			}
			var err error
			median, worst, ours := rs.get(&err, name, "median-x"), rs.get(&err, name, "worst-x"), rs.get(&err, name, "ours-med-ns")
			if err != nil {
				line = append(line, "not measured")
				continue
			}
			line = append(line, fmt.Sprintf("%.1f× / %.1f× (%s)", median, worst, duration(ours)))
		}
		out = append(out, line)
	}
	return out
}

func above8(rs results) string {
	var err error
	slower := rs.get(&err, "Ratio/above8/any", "slower-count")
	worst := rs.get(&err, "Ratio/above8/any", "worst-x")
	median := rs.get(&err, "Ratio/above8/any", "median-x")
	if err != nil {
		return "Above 8 nodes: not measured: " + err.Error() + "."
	}
	return fmt.Sprintf("Above 8 nodes (1,000 random inputs at 9-16 nodes, every policy but none): %.0f slower than kubelet; median %.1f×, worst %.1f×.", slower, median, worst)
}

func rowsAllocator(rs results) []row {
	rows := []row{
		fig("Topology Manager merge, 8 nodes, random hints: ours / kubelet's Cartesian product, in Go (`-bench 'Merge(Naive)?8Nodes'`)", func(e *error) string {
			return fmt.Sprintf("%s / %s", duration(rs.get(e, "Merge8Nodes", "ns/op")), duration(rs.get(e, "MergeNaive8Nodes", "ns/op")))
		}),
		fig("one admission in a 64-node partition, container / pod scope (`partition/allocator`)", func(e *error) string {
			return fmt.Sprintf("%s / %s", duration(rs.get(e, "Admit64Nodes", "ns/op")), duration(rs.get(e, "Admit64NodesPodScope", "ns/op")))
		}),
		fig("the NRI plugin's CreateContainer and StopContainer in process, restricted, 2 / 8 / 16 / 64 nodes, decision only (`nriplugin`)", func(e *error) string {
			var parts []string
			for _, n := range []int{2, 8, 16, 64} {
				parts = append(parts, duration(rs.get(e, fmt.Sprintf("CreateContainer/nodes=%d/restricted", n), "ns/op")))
			}
			return strings.Join(parts, " / ")
		}),
	}
	for _, pods := range []int{16, 256} {
		b := fmt.Sprintf("DurableDecision/pods=%d/", pods)
		rows = append(rows, fig(fmt.Sprintf("a decision made durable, %d pods held (`-bench DurableDecision`): answered (decision and journal append) / one after another (each also waits for the previous fdatasync) / the append and fdatasync alone / the checkpoint rewritten in its place", pods), func(e *error) string {
			return fmt.Sprintf("%s / %s / %s / %s; a record %.0f bytes, the state %.0f",
				duration(rs.get(e, b+"answer", "ns/op")), duration(rs.get(e, b+"decision", "ns/op")),
				duration(rs.get(e, b+"write=journal", "ns/op")), duration(rs.get(e, b+"write=checkpoint", "ns/op")),
				rs.get(e, b+"write=journal", "record-bytes"), rs.get(e, b+"write=journal", "state-bytes"))
		}))
	}
	for _, clients := range []int{1, 16} {
		b := rs.find(fmt.Sprintf("AdmitThroughSocket/clients=%d/", clients))
		rows = append(rows, fig(fmt.Sprintf("the allocator daemon through its socket, %d client(s) (`-bench AdmitThroughSocket`)", clients), func(e *error) string {
			return fmt.Sprintf("%.0f admissions/s, p50 %.2f ms, p99 %.2f ms",
				rs.get(e, b, "admissions/s"), rs.get(e, b, "p50-ms"), rs.get(e, b, "p99-ms"))
		}))
	}
	rows = append(rows, fig("… 1 client, a partition of 16 / 34 / 64 NUMA nodes planned from a synthetic host (4-socket SNC4, GB200 tray, 32-socket SNC2; nri mode)", func(e *error) string {
		var rate, p50, p99 []string
		for _, n := range []int{16, 34, 64} {
			b := rs.find(fmt.Sprintf("AdmitThroughSocket/nodes=%d/clients=1/", n))
			rate = append(rate, fmt.Sprintf("%.0f", rs.get(e, b, "admissions/s")))
			p50 = append(p50, fmt.Sprintf("%.2f", rs.get(e, b, "p50-ms")))
			p99 = append(p99, fmt.Sprintf("%.2f", rs.get(e, b, "p99-ms")))
		}
		return fmt.Sprintf("%s admissions/s, p50 %s ms, p99 %s ms", strings.Join(rate, " / "), strings.Join(p50, " / "), strings.Join(p99, " / "))
	}))
	return rows
}

func rowsContainerCreate(rs results) []row {
	const b, s = "ContainerCreate/plugin", "ContainerCreate/stalled-apiserver"
	ms := func(e *error, bench, unit string) string {
		v := rs.get(e, bench, unit)
		if math.Abs(v) < 0.005 {
			v = 0 // a difference that rounds to zero, not "-0.00"
		}
		return fmt.Sprintf("%.2f ms", v)
	}
	pair := func(e *error, bench, prefix string) string {
		return ms(e, bench, prefix+"-p50-ms") + " / " + ms(e, bench, prefix+"-p99-ms")
	}
	return []row{
		fig("CRI CreateContainer, 1,000 containers on each of three containerds in turn: no NRI plugin", func(e *error) string { return pair(e, b, "none") }),
		fig("… a no-op plugin that answers at once (NRI's own cost)", func(e *error) string { return pair(e, b, "no-op") }),
		fig("… the allocator's plugin, nri mode", func(e *error) string { return pair(e, b, "plugin") }),
		fig("the plugin's own cost: plugin − no-op", func(e *error) string { return pair(e, b, "own") }),
		fig("the plugin with NRI's cost: plugin − none", func(e *error) string { return pair(e, b, "added") }),
		fig("timed in the plugin: its answer to CreateContainer / the decision made durable in it", func(e *error) string {
			return pair(e, b, "answer") + "; " + pair(e, b, "decision")
		}),
		fig("the plugin's pod cache on a real kube-apiserver, SIGSTOPped every other 50 containers: container scope, API server running / stopped", func(e *error) string {
			return pair(e, s, "running") + "; " + pair(e, s, "stopped")
		}),
		fig("… pod scope, API server stopped: a pod the cache holds (slowest) / one it does not (waits the cache's bound, refused) / a container created meanwhile (slowest)", func(e *error) string {
			return ms(e, s, "unit-stopped-max-ms") + " / " + ms(e, s, "unit-uncached-ms") + " / " + ms(e, s, "beside-uncached-max-ms")
		}),
	}
}

// find is the one benchmark whose name starts with prefix (names that
// carry the machine, as GOMAXPROCS=2), or prefix itself when there is
// none or several, which get then reports as missing.
func (rs results) find(prefix string) string {
	var found []string
	for name := range rs {
		if strings.HasPrefix(name, prefix) {
			found = append(found, name)
		}
	}
	if len(found) != 1 {
		return prefix
	}
	return found[0]
}

// duration prints ns in the unit that reads best.
func duration(ns float64) string {
	switch {
	case ns >= nsPerS:
		return fmt.Sprintf("%.2f s", ns/nsPerS)
	case ns >= nsPerMS:
		return fmt.Sprintf("%.2f ms", ns/nsPerMS)
	case ns >= 10*nsPerUS:
		return fmt.Sprintf("%.0f µs", ns/nsPerUS)
	case ns >= nsPerUS:
		return fmt.Sprintf("%.1f µs", ns/nsPerUS)
	default:
		return fmt.Sprintf("%.0f ns", ns)
	}
}

// printer writes Markdown and keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) linef(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

func (p *printer) table(first, second string, rows []row) {
	lines := make([][]string, len(rows))
	for i, r := range rows {
		lines[i] = []string{r.what, r.figure}
	}
	p.tableRows([]string{first, second}, lines)
}

func (p *printer) tableRows(header []string, lines [][]string) {
	p.linef("| %s |", strings.Join(header, " | "))
	p.linef("|%s", strings.Repeat("---|", len(header)))
	for _, l := range lines {
		p.linef("| %s |", strings.Join(l, " | "))
	}
}
