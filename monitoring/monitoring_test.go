package monitoring_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

// PromtoolEnv names the promtool test/promtool/build.sh builds (make test
// passes its --cached path).
const PromtoolEnv = "NUMA_PARTITION_PROMTOOL"

// scrapeDaemon is what a real daemon serves on /metrics with every family
// present: an nri-mode daemon (pod cache metrics) that answered an NRI
// event, as `allocator serve` registers them.
func scrapeDaemon(t *testing.T) string {
	t.Helper()
	const gib = uint64(1) << 30
	srv, err := daemon.NewServer(daemon.ServerOptions{
		Partition: "node0", StateDir: t.TempDir(), Version: "v1.2.3", Commit: "abc1234",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Config: allocator.Config{
			Nodes: []allocator.NodeResources{
				{ID: 0, Memory: 16 * gib, Hugepages: map[uint64]uint64{2 << 20: 2 * gib}, Reserved: map[allocator.ResourceName]uint64{allocator.ResourceMemory: gib}},
				{ID: 1, Memory: 16 * gib},
			},
			Policy: "single-numa-node", Scope: "container",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.ObservePodCache(func() kubeapi.CacheStatus { return kubeapi.CacheStatus{Synced: true, Pods: 3} }); err != nil {
		t.Fatal(err)
	}
	drifted, err := srv.ObserveDrift()
	if err != nil {
		t.Fatal(err)
	}
	drifted(true)
	srv.ObserveNRIEvent("create_container", time.Millisecond)
	rec := httptest.NewRecorder()
	srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", daemonapi.PathMetrics, nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	body, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// families are the metric families of a scrape by name, with their type;
// the series names a query may use: a histogram's _bucket, _sum and
// _count.
func families(t *testing.T, text string) (byName map[string]string, series map[string]bool) {
	t.Helper()
	byName, series = map[string]string{}, map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) (\S+)$`).FindAllStringSubmatch(text, -1) {
		byName[m[1]] = m[2]
		series[m[1]] = true
		if m[2] == "histogram" || m[2] == "summary" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				series[m[1]+s] = true
			}
		}
	}
	if len(byName) == 0 {
		t.Fatalf("no metric families in the scrape:\n%s", text)
	}
	return byName, series
}

// ownMetric matches the names of the project's own metrics in a query.
var ownMetric = regexp.MustCompile(`\bnuma_partition_[a-zA-Z0-9_]+\b`)

// notOurs are the series the assets may use that Prometheus makes itself.
var notOurs = regexp.MustCompile(`\bup\{`)

type rulesFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// queries are the PromQL expressions of the assets, by where they are.
func queries(t *testing.T) map[string]string {
	t.Helper()
	q := map[string]string{}
	data, err := os.ReadFile("alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules rulesFile
	if err := yaml.UnmarshalStrict(data, &rules); err != nil {
		t.Fatalf("alerts.yaml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alerts.yaml: alert %s needs a severity label, a summary and a description", r.Alert)
			}
			q["alerts.yaml: "+r.Alert] = r.Expr
		}
	}
	if len(q) == 0 {
		t.Fatal("alerts.yaml: no rules")
	}

	data, err = os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title      string         `json:"title"`
			Type       string         `json:"type"`
			Datasource map[string]any `json:"datasource"`
			Targets    []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	// Importable in any Grafana: the data source is a variable, never
	// the uid of the author's own.
	hasDatasource := false
	for _, v := range dash.Templating.List {
		if v.Type == "datasource" && v.Name == "datasource" && v.Query == "prometheus" {
			hasDatasource = true
		}
		if v.Type == "query" {
			if m, ok := v.Query.(map[string]any); ok {
				q["dashboard.json: variable "+v.Name], _ = m["query"].(string)
			}
		}
	}
	if !hasDatasource {
		t.Error("dashboard.json: no datasource variable of type prometheus")
	}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource["uid"] != "${datasource}" {
			t.Errorf("dashboard.json: panel %q: datasource %v, want the ${datasource} variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("dashboard.json: panel %q has no query", p.Title)
		}
		for i, tg := range p.Targets {
			q["dashboard.json: "+p.Title+" #"+string(rune('A'+i))] = tg.Expr
		}
	}
	return q
}

// Every query of the alert rules and of the dashboard names only metrics
// the daemon exports (renaming one breaks this test), and every metric of
// the daemon's own is in one of them.
func TestAssetsUseTheDaemonsMetrics(t *testing.T) {
	types, series := families(t, scrapeDaemon(t))
	used := map[string]bool{}
	for where, expr := range queries(t) {
		names := ownMetric.FindAllString(expr, -1)
		if len(names) == 0 && !notOurs.MatchString(expr) {
			t.Errorf("%s: %q uses none of the daemon's metrics", where, expr)
		}
		for _, n := range names {
			if !series[n] {
				t.Errorf("%s: %s is not a metric the daemon exports", where, n)
			}
			used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")] = true
		}
	}
	var unused []string
	for name := range types {
		if strings.HasPrefix(name, "numa_partition_") && !used[name] {
			unused = append(unused, name)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("metrics neither dashboard.json nor alerts.yaml shows (add a panel): %s", strings.Join(unused, ", "))
	}
}

// The scrape configs select numa-partition's Nodes by the label the
// planner sets, and use the job name the rules and dashboard expect.
func TestScrapeConfigs(t *testing.T) {
	for _, f := range []string{"prometheus-scrape.yaml", "scrapeconfig.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, want := range []string{"numa-partition-allocator", "__meta_kubernetes_node_label_numa_partition_io_partition", "$1:9464"} {
			if !strings.Contains(string(data), want) {
				t.Errorf("%s lacks %s", f, want)
			}
		}
	}
}

// promtool is test/promtool/build.sh's binary; without it the test skips
// loudly (CI builds it first and fails here if it did not).
func promtool(t *testing.T) string {
	t.Helper()
	path := os.Getenv(PromtoolEnv)
	if path == "" {
		msg := "SKIPPED LOUDLY: " + PromtoolEnv + " is not set, so promtool did NOT check the daemon's metrics and the alert rules; " +
			"run test/promtool/build.sh (a few minutes cold) and set " + PromtoolEnv + " to the path it prints (make test does when it is cached)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s=%s is not an executable: %v", PromtoolEnv, path, err)
	}
	return path
}

func runPromtool(t *testing.T, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
}

// The daemon's /metrics as Prometheus's linter sees it: names, types,
// units and help (a counter without _total fails it).
func TestPromtoolCheckMetrics(t *testing.T) {
	runPromtool(t, scrapeDaemon(t), "check", "metrics")
}

// The alert rules are valid, and fire as alerts_test.yaml says.
func TestPromtoolRules(t *testing.T) {
	abs, err := filepath.Abs("alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runPromtool(t, "", "check", "rules", abs)
	runPromtool(t, "", "test", "rules", "alerts_test.yaml")
}

// checkedBy lists the series alerts_test.yaml feeds, for the rules test
// to cover each alert at least once.
func TestEveryAlertHasAUnitTest(t *testing.T) {
	data, err := os.ReadFile("alerts_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(data, &tests); err != nil {
		t.Fatalf("alerts_test.yaml: %v", err)
	}
	var tested []string
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			tested = append(tested, a.Alertname)
		}
	}
	for where := range queries(t) {
		if name, ok := strings.CutPrefix(where, "alerts.yaml: "); ok && !slices.Contains(tested, name) {
			t.Errorf("alerts_test.yaml has no test of %s", name)
		}
	}
}
