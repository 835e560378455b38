// Package promstat turns two scrapes of a component's /metrics (Prometheus
// text format) into the figures test/scale/run.sh reports: request rates
// from counter deltas, gauges, and histogram quantiles over the window
// between the scrapes, computed the way Prometheus' histogram_quantile does
// so that they compare with SIG Scalability's SLIs. Pure: no I/O but the
// io.Reader it is given.
package promstat

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one /metrics page, by metric family name.
type Scrape map[string]*dto.MetricFamily

// Parse reads a /metrics page in the Prometheus text format. The exposition
// parser of prometheus/common is used rather than a hand-written one: it
// handles escaping, comments and histogram series the way Prometheus does.
func Parse(r io.Reader) (Scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return Scrape(fams), nil
}

// Labels is a series' label set.
type Labels map[string]string

// Match reports whether a series' labels satisfy a filter: nil accepts all.
type Match func(Labels) bool

func labelsOf(m *dto.Metric) Labels {
	l := make(Labels, len(m.GetLabel()))
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// key is a series' identity across scrapes: its labels, sorted.
func key(l Labels) string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(l[n])
		b.WriteByte(',')
	}
	return b.String()
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

// Sum adds up the value of every series of a counter or gauge that match
// accepts. ok is false when the family is absent (a metric renamed or
// removed in this version must not read as zero).
func (s Scrape) Sum(name string, match Match) (sum float64, ok bool) {
	f, ok := s[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if match == nil || match(labelsOf(m)) {
			sum += value(m)
		}
	}
	return sum, true
}

// Delta is, summed over the matching series, how much a counter grew from
// before to after. A series absent before counts from zero (it appeared in
// the window); one that went down (the process restarted) is an error.
func Delta(before, after Scrape, name string, match Match) (float64, error) {
	fa, ok := after[name]
	if !ok {
		return 0, fmt.Errorf("metric %s: not in the second scrape", name)
	}
	prev := map[string]float64{}
	if fb, ok := before[name]; ok {
		for _, m := range fb.GetMetric() {
			prev[key(labelsOf(m))] = value(m)
		}
	}
	var d float64
	for _, m := range fa.GetMetric() {
		l := labelsOf(m)
		if match != nil && !match(l) {
			continue
		}
		v := value(m) - prev[key(l)]
		if v < 0 {
			return 0, fmt.Errorf("metric %s{%s}: went down from %g to %g (restarted?)", name, key(l), prev[key(l)], value(m))
		}
		d += v
	}
	return d, nil
}

// Bucket is a histogram bucket: the count of observations ≤ UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// HistogramDelta is the histogram of the observations made between the two
// scrapes, for the series match accepts, grouped by the labels named in by
// (all series in one group when by is empty). Groups are keyed by the
// values of by joined with " ".
func HistogramDelta(before, after Scrape, name string, match Match, by ...string) (map[string][]Bucket, error) {
	fa, ok := after[name]
	if !ok {
		return nil, fmt.Errorf("metric %s: not in the second scrape", name)
	}
	prev := map[string]map[float64]float64{}
	if fb, ok := before[name]; ok {
		for _, m := range fb.GetMetric() {
			bs := map[float64]float64{}
			for _, b := range m.GetHistogram().GetBucket() {
				bs[b.GetUpperBound()] = float64(b.GetCumulativeCount())
			}
			prev[key(labelsOf(m))] = bs
		}
	}
	groups := map[string]map[float64]float64{}
	for _, m := range fa.GetMetric() {
		l := labelsOf(m)
		if m.GetHistogram() == nil {
			return nil, fmt.Errorf("metric %s: not a histogram", name)
		}
		if match != nil && !match(l) {
			continue
		}
		vals := make([]string, len(by))
		for i, n := range by {
			vals[i] = l[n]
		}
		g := strings.Join(vals, " ")
		if groups[g] == nil {
			groups[g] = map[float64]float64{}
		}
		p := prev[key(l)]
		for _, b := range m.GetHistogram().GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				groups[g][b.GetUpperBound()] += float64(b.GetCumulativeCount()) - p[b.GetUpperBound()]
			}
		}
		// The +Inf bucket is the sample count (the text format may or may
		// not list it as a bucket: take the count either way, once).
		groups[g][math.Inf(1)] += float64(m.GetHistogram().GetSampleCount()) - sampleCount(before, name, l)
	}
	out := make(map[string][]Bucket, len(groups))
	for g, bs := range groups {
		list := make([]Bucket, 0, len(bs))
		for ub, c := range bs {
			list = append(list, Bucket{UpperBound: ub, Count: c})
		}
		sort.Slice(list, func(i, j int) bool { return list[i].UpperBound < list[j].UpperBound })
		out[g] = list
	}
	return out, nil
}

func sampleCount(s Scrape, name string, l Labels) float64 {
	f, ok := s[name]
	if !ok {
		return 0
	}
	k := key(l)
	for _, m := range f.GetMetric() {
		if key(labelsOf(m)) == k {
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// Total is the number of observations in a histogram (its +Inf bucket).
func Total(buckets []Bucket) float64 {
	if len(buckets) == 0 {
		return 0
	}
	return buckets[len(buckets)-1].Count
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) of a histogram given as
// cumulative buckets sorted by upper bound, the last one +Inf, as
// Prometheus' histogram_quantile does: linear interpolation inside the
// bucket the rank falls in, the lowest bucket starting at 0, and a rank in
// the +Inf bucket answered with the highest finite bound. NaN when the
// histogram is empty.
func Quantile(q float64, buckets []Bucket) float64 {
	if q < 0 || q > 1 || len(buckets) < 2 || !math.IsInf(buckets[len(buckets)-1].UpperBound, 1) {
		return math.NaN()
	}
	total := buckets[len(buckets)-1].Count
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	i := sort.Search(len(buckets)-1, func(i int) bool { return buckets[i].Count >= rank })
	if i == len(buckets)-1 {
		return buckets[len(buckets)-2].UpperBound
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = buckets[i-1].UpperBound, buckets[i-1].Count
	}
	inBucket := buckets[i].Count - below
	if inBucket <= 0 {
		return buckets[i].UpperBound
	}
	return lower + (buckets[i].UpperBound-lower)*(rank-below)/inBucket
}
