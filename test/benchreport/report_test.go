package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkDurableDecision/pods=16/answer-2   	    2000	     79507 ns/op	       491.0 record-bytes	      5479 state-bytes
BenchmarkDurableDecision/pods=16/decision-2 	    2000	    281746 ns/op	       491.0 record-bytes	      5479 state-bytes
BenchmarkDurableDecision/pods=16/write=journal-2    	    2000	    223352 ns/op	       481.0 record-bytes	      5333 state-bytes
BenchmarkDurableDecision/pods=16/write=checkpoint-2 	    2000	    881659 ns/op	       481.0 record-bytes	      5333 state-bytes
BenchmarkAdmitThroughSocket/clients=1/GOMAXPROCS=2-2         	    1000	         0 ns/op	       827.0 admissions/s	         0.56 p50-ms	         2.74 p99-ms
BenchmarkAdmitThroughSocket/nodes=16/clients=1/GOMAXPROCS=2-2         	     300	       154.0 admissions/s	         1.045 p50-ms	       207.8 p99-ms
BenchmarkAdmitThroughSocket/nodes=34/clients=1/GOMAXPROCS=2-2         	     300	       249.3 admissions/s	         1.132 p50-ms	        29.61 p99-ms
BenchmarkAdmitThroughSocket/nodes=64/clients=1/GOMAXPROCS=2-2         	     300	       249.1 admissions/s	         1.035 p50-ms	         6.684 p99-ms
BenchmarkDiscover/2s512t-snc3-2                 	       3	 104872209 ns/op	 3883896 B/op	   41947 allocs/op
BenchmarkDiscover/gb200-34n-2                   	       3	  46583989 ns/op	 1735904 B/op	   16384 allocs/op
BenchmarkApplyBigHosts/gb200-34n/plan=fresh-2           	       3	    169230 ns/op	       234.0 files	        18.00 units	  290874 B/op	      79 allocs/op
BenchmarkApplyBigHosts/gb200-34n/plan=noop-2            	       3	    121883 ns/op	       234.0 files	        18.00 units	   75346 B/op	      56 allocs/op
--- BENCH: BenchmarkRatio/random/02/best-effort-2
    ratio_test.go:130: worst: 2.5x, BenchmarkRatio 12 is in a log line
BenchmarkRatio/random/02/best-effort-5 	       5	        16.20 median-x	         2.512 worst-x	         0 slower-count	        41.50 ours-med-ns	       700.0 kubelet-med-ns	       120.0 kubelet-ns/perm	         0 ns/op
PASS
`

func TestParseAndReport(t *testing.T) {
	rs := results{}
	if err := parse(strings.NewReader(sample), rs); err != nil {
		t.Fatal(err)
	}
	if got := rs["Ratio/random/02/best-effort"]["worst-x"]; got != 2.512 {
		t.Fatalf("worst-x = %v, want 2.512 (results %v)", got, rs)
	}
	if _, ok := rs["Ratio/random/02/best-effort-5"]; ok {
		t.Fatal("the GOMAXPROCS suffix was kept")
	}
	var out strings.Builder
	if err := write(&out, "title", rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| a decision made durable, 16 pods held (`-bench DurableDecision`): answered (decision and journal append) / one after another (each also waits for the previous fdatasync) / the append and fdatasync alone / the checkpoint rewritten in its place | 80 µs / 282 µs / 223 µs / 882 µs; a record 481 bytes, the state 5333 |",
		"| the allocator daemon through its socket, 1 client(s) (`-bench AdmitThroughSocket`) | 827 admissions/s, p50 0.56 ms, p99 2.74 ms |",
		"| best-effort | 16.2× / 2.5× (42 ns) | not measured |",
		"| … 1 client, a partition of 16 / 34 / 64 NUMA nodes planned from a synthetic host (4-socket SNC4, GB200 tray, 32-socket SNC2; nri mode) | 154 / 249 / 249 admissions/s, p50 1.04 / 1.13 / 1.03 ms, p99 207.80 / 29.61 / 6.68 ms |",
		"| discover its sysfs tree (`numa`, `-bench Discover`) | 104.87 ms | not measured: BenchmarkDiscover/2s512t-nps4 did not report ns/op | 46.58 ms |",
		"| the bundle: units / files | not measured: BenchmarkApplyBigHosts/2s512t-snc3/plan=fresh did not report units | not measured: BenchmarkApplyBigHosts/2s512t-nps4/plan=fresh did not report units | 18 / 234 |",
		"| apply's steps from an empty host / from one where it is applied, pure (`slices/apply`, `-bench ApplyBigHosts`) | not measured: BenchmarkApplyBigHosts/2s512t-snc3/plan=fresh did not report ns/op | not measured: BenchmarkApplyBigHosts/2s512t-nps4/plan=fresh did not report ns/op | 169 µs / 122 µs |",
		// Missing benchmarks say so, by name, instead of printing zeros.
		"not measured: BenchmarkDurableDecision/pods=256/answer did not report ns/op",
		"not measured: BenchmarkContainerCreate/plugin did not report none-p50-ms",
		"Above 8 nodes: not measured: BenchmarkRatio/above8/any did not report slower-count.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestParseRefusesAValueWithoutUnit(t *testing.T) {
	err := parse(strings.NewReader("BenchmarkX-2 10 5 ns/op 7\n"), results{})
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("got %v, want an error naming line 1", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("BenchmarkX-2 10 5 ns/op 7\n")
	f.Fuzz(func(t *testing.T, in string) {
		rs := results{}
		if err := parse(strings.NewReader(in), rs); err != nil {
			return
		}
		var out strings.Builder
		if err := write(&out, "", rs); err != nil {
			t.Fatal(err)
		}
	})
}
