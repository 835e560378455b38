package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// results are the benchmarks of one or more `go test -bench` outputs,
// by name without the GOMAXPROCS suffix: each a map of unit to value
// (ns/op and every b.ReportMetric). A name that appears twice keeps its
// last line.
type results map[string]map[string]float64

// procSuffix is go test's "-N" after a benchmark's name (GOMAXPROCS).
var procSuffix = regexp.MustCompile(`-\d+$`)

// parse reads go test's benchmark lines ("BenchmarkX/sub-2  N  v unit
// v unit …") into rs, and ignores every other line (logs, PASS, ok).
func parse(r io.Reader, rs results) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue // a benchmark's name in a log line, not a result
		}
		if len(fields)%2 != 0 {
			return fmt.Errorf("line %d: %q: a value without its unit", line, sc.Text())
		}
		name := procSuffix.ReplaceAllString(strings.TrimPrefix(fields[0], "Benchmark"), "")
		m := map[string]float64{}
		for i := 2; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return fmt.Errorf("line %d: %q is not a number (unit %s)", line, fields[i], fields[i+1])
			}
			m[fields[i+1]] = v
		}
		rs[name] = m
	}
	return sc.Err()
}

// missing is a figure the outputs do not hold.
type missing struct{ bench, unit string }

func (m missing) Error() string { return fmt.Sprintf("Benchmark%s did not report %s", m.bench, m.unit) }

// get is one figure; the first figure missing is kept in *err and later
// gets return 0, so a row is either whole or says what it lacks.
func (rs results) get(err *error, bench, unit string) float64 {
	if *err != nil {
		return 0
	}
	v, ok := rs[bench][unit]
	if !ok {
		*err = missing{bench, unit}
	}
	return v
}
