// Command benchreport prints the README's Performance tables from the
// output of one `make bench` run: every figure in them comes from the
// benchmark lines it is given, none is typed in by hand. A figure a run
// did not produce (a benchmark skipped: no root, no real containerd)
// shows as "not measured" with the benchmark and unit it needed.
//
//	go run ./test/benchreport [-title TEXT] FILE...
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	title := flag.String("title", "", "a line printed above the tables (the run's date, machine and commit)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchreport [-title TEXT] FILE... (go test -bench outputs)")
		os.Exit(2)
	}
	rs := results{}
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchreport:", err)
			os.Exit(1)
		}
		err = parse(f, rs)
		_ = f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchreport: %s: %v\n", name, err)
			os.Exit(1)
		}
	}
	if err := write(os.Stdout, *title, rs); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func write(w io.Writer, title string, rs results) error {
	p := &printer{w: w}
	if title != "" {
		p.linef("%s", title)
		p.linef("")
	}
	p.table("operation", "time", rowsHost(rs))
	p.linef("")
	p.linef("Big hosts, from synthetic sysfs trees of today's largest shapes written at test time (`numa/numatest`), each planned with its config on cgroup v2: the 512-thread hosts one partition a node, the tray one a Grace with its 16 GPU-memory nodes, placed by the allocator. Their bundles cannot run on a test machine's systemd; its jobs' cost is the apply rows above.")
	p.linef("")
	p.tableRows(bigHostsHeader(), bigHostsRows(rs))
	p.linef("")
	p.linef("Topology Manager merge against kubelet 1.37.2's own code (`test/tmcompare`, `-bench Ratio`), same process, same random inputs (200 a set; 100 at 62 nodes, the widest kubelet's 64-bit masks hold): kubelet's time over ours, median / worst input, and our median time.")
	p.linef("")
	p.tableRows(ratioHeader(), ratioRows(rs))
	p.linef("")
	p.linef("%s", above8(rs))
	p.linef("")
	p.table("allocator", "time", rowsAllocator(rs))
	p.linef("")
	p.table("container creation on a real containerd 2 and runc (`nriplugin/runtimetest`)", "p50 / p99", rowsContainerCreate(rs))
	return p.err
}
