// Package monitoring holds the assets a cluster's monitoring stack takes
// for numa-partition's allocator daemons, and their tests: Prometheus
// alert rules (alerts.yaml, with promtool unit tests in alerts_test.yaml),
// a Grafana dashboard (dashboard.json), and scrape configs for a plain
// Prometheus (prometheus-scrape.yaml) and for prometheus-operator
// (scrapeconfig.yaml). The tests check them against the metrics the daemon
// exports, so that renaming a metric breaks them, and run promtool on the
// daemon's /metrics and on the rules when test/promtool/build.sh has built
// it (docs/allocator-daemon.md#metrics).
package monitoring
