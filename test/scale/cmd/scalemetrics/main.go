// Command scalemetrics reads two scrapes of kube-apiserver's /metrics taken
// SECONDS apart (and optionally one of etcd's) and prints, one "key<TAB>value"
// a line, the figures test/scale/run.sh records: request rates, watches,
// stored objects, etcd's database size and the p99 latency of mutating
// single-object calls (SIG Scalability's API call latency SLI) over the
// window. Shell would have to re-implement histogram_quantile; this does it
// once, tested (promstat).
//
//	scalemetrics -before a.prom -after b.prom -seconds 60 [-etcd etcd.prom]
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/numa-partition/numa-partition/test/scale/promstat"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scalemetrics:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("scalemetrics", flag.ContinueOnError)
	before := fs.String("before", "", "kube-apiserver /metrics at the window's start")
	after := fs.String("after", "", "kube-apiserver /metrics at the window's end")
	seconds := fs.Float64("seconds", 0, "seconds between the two scrapes")
	etcd := fs.String("etcd", "", "etcd /metrics (optional)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *before == "" || *after == "" {
		return fmt.Errorf("-before and -after are required")
	}
	if *seconds <= 0 {
		return fmt.Errorf("-seconds %g: must be > 0", *seconds)
	}
	b, err := load(*before)
	if err != nil {
		return err
	}
	a, err := load(*after)
	if err != nil {
		return err
	}
	var e promstat.Scrape
	if *etcd != "" {
		if e, err = load(*etcd); err != nil {
			return err
		}
	}
	rows, err := promstat.APIServerFigures(b, a, *seconds, e)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := rows[k]
		if f, ok := v.(float64); ok {
			if math.IsNaN(f) {
				v = "NA"
			} else {
				v = fmt.Sprintf("%.6g", f)
			}
		}
		if _, err := fmt.Fprintf(w, "%s\t%v\n", k, v); err != nil {
			return err
		}
	}
	return nil
}

func load(path string) (promstat.Scrape, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := promstat.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
