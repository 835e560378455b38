package daemon_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(daemonBinary, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestCLIAgainstTwoPartitions drives admit (nodeSelector matching),
// allocations and release through the real binary against two daemons.
func TestCLIAgainstTwoPartitions(t *testing.T) {
	sockets := t.TempDir()
	cfgFile := writeConfig(t, t.TempDir(), testConfig())
	for _, color := range []string{"red", "blue"} {
		startDaemon(t, daemonSpec{dir: t.TempDir(), socketDir: sockets, partition: color, config: cfgFile, extra: []string{"--label", "numa-type=" + color}})
	}
	write := func(p podSpec) string {
		path := filepath.Join(t.TempDir(), p.uid+".yaml")
		if err := os.WriteFile(path, p.yaml(t), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	blue := write(podSpec{uid: "blue-pod", memory: []uint64{gib}, selector: map[string]string{"numa-type": "blue"}})

	out, code := runCLI(t, "admit", "-f", blue, "--socket-dir", sockets)
	if code != 0 || !strings.Contains(out, "Pod test/p-blue-pod (uid blue-pod) admitted by partition blue") || !strings.Contains(out, "c0: NUMA ") {
		t.Fatalf("admit by nodeSelector: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "admit", "-f", write(podSpec{uid: "nowhere", memory: []uint64{gib}, selector: map[string]string{"numa-type": "green"}}), "--socket-dir", sockets)
	if code != 2 || !strings.Contains(out, "no partition matches the pod's nodeSelector {numa-type=green}") || !strings.Contains(out, "blue {numa-type=blue}") {
		t.Fatalf("unmatched selector: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "admit", "-f", write(podSpec{uid: "either", memory: []uint64{gib}}), "--socket-dir", sockets)
	if code != 2 || !strings.Contains(out, "matches 2 partitions (blue, red)") {
		t.Fatalf("ambiguous: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "admit", "-f", write(podSpec{uid: "huge", memory: []uint64{40 * gib}}), "--partition", "red", "--socket-dir", sockets)
	if code != 1 || !strings.Contains(out, "REJECTED by partition red") || !strings.Contains(out, "reason: ") {
		t.Fatalf("rejection: exit %d\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(podSpec{uid: "b", memory: []uint64{gib}}.yaml(t)), "memory: 1Gi", "memory: lots", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runCLI(t, "admit", "-f", bad, "--partition", "red", "--socket-dir", sockets)
	if code != 2 || !strings.Contains(out, "spec.containers[0].resources.limits.memory") {
		t.Fatalf("malformed: exit %d\n%s", code, out)
	}

	// Both placements of --output work.
	for _, args := range [][]string{{"--output", "json", "allocations"}, {"allocations", "-o", "json"}} {
		out, code = runCLI(t, append(args, "--socket-dir", sockets)...)
		// The CLI prints an AllocationList (apiVersion, kind, items).
		var list struct {
			APIVersion string                          `json:"apiVersion"`
			Kind       string                          `json:"kind"`
			Items      []daemonapi.AllocationsResponse `json:"items"`
		}
		lists := &list.Items
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil || list.Kind != "AllocationList" || list.APIVersion != "numa-partition.io/v1alpha1" ||
			len(*lists) != 2 || (*lists)[0].Partition != "blue" || len((*lists)[0].Allocations) != 1 || len((*lists)[1].Allocations) != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
	}
	// The default table leaves the UID and PINNED to -o wide, as kubectl
	// leaves UIDs out.
	out, code = runCLI(t, "allocations", "--socket-dir", sockets)
	if code != 0 || !regexp.MustCompile(`(?m)^blue\s+test/p-blue-pod\s+c0\s+\d\s+memory 1Gi$`).MatchString(out) {
		t.Fatalf("allocations table: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "-o", "wide", "allocations", "--socket-dir", sockets)
	if code != 0 || !regexp.MustCompile(`(?m)^blue\s+test/p-blue-pod\s+blue-pod\s+true\s+c0\s+\d\s+memory 1Gi$`).MatchString(out) {
		t.Fatalf("allocations -o wide: exit %d\n%s", code, out)
	}

	out, code = runCLI(t, "release", "--socket-dir", sockets, "blue-pod")
	if code != 0 || !strings.Contains(out, "released pod blue-pod in partition blue") {
		t.Fatalf("release: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "release", "--socket-dir", sockets, "blue-pod")
	if code != 1 || !strings.Contains(out, "has no allocation in any partition (blue, red)") {
		t.Fatalf("second release: exit %d\n%s", code, out)
	}
}

func TestMetrics(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, daemonSpec{dir: dir, config: writeConfig(t, dir, testConfig()), extra: []string{"--metrics-addr", "127.0.0.1:0"}})
	admitSome(t, d, 2, 3*gib)
	rejected, err := d.Client.Admit(t.Context(), podSpec{uid: "too-big", memory: []uint64{20 * gib}}.yaml(t))
	if err != nil || rejected.Decision.Admitted {
		t.Fatalf("want a rejection: %+v %v", rejected, err)
	}
	// Counted under kubelet's reason the answer gave (the text after it
	// is a message, never a label).
	reason, _, _ := strings.Cut(rejected.Decision.Reason, ":")
	if _, err := d.Client.Admit(t.Context(), []byte("kind: Pod")); err == nil {
		t.Fatal("want an invalid request")
	}
	m := scrape(t, d.socket)
	for _, want := range []string{
		`numa_partition_allocator_admissions_total{partition="test",result="admitted"} 2`,
		`numa_partition_allocator_admissions_total{partition="test",result="rejected"} 1`,
		`numa_partition_allocator_rejections_total{partition="test",reason="` + reason + `"} 1`,
		`numa_partition_allocator_broken{partition="test"} 0`,
		`numa_partition_allocator_admissions_total{partition="test",result="invalid"} 1`,
		`numa_partition_allocator_admission_duration_seconds_count{partition="test"} 4`,
		`numa_partition_allocator_allocations{partition="test"} 2`,
		`numa_partition_allocator_state_generation{partition="test"} 2`,
		`numa_partition_allocator_free_bytes{node="1",partition="test",resource="hugepages-2Mi"} 2.147483648e+09`,
		`numa_partition_allocator_allocatable_bytes{node="0",partition="test",resource="memory"} 1.3958643712e+10`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// The binary's build, as `numa-partition version` reports it: this
	// test's go build sets no ldflags, so version and commit come from
	// the Go build info (or say dev/unknown), never empty.
	if !regexp.MustCompile(`(?m)^numa_partition_build_info\{commit="[^"]+",goversion="go[^"]+",partition="test",version="[^"]+"\} 1$`).MatchString(m) {
		t.Errorf("no numa_partition_build_info with commit, goversion and version:\n%s", grepLines(m, "build_info"))
	}
	// The generation is the state's number, not a count since start: a
	// gauge (promtool: a counter must end in _total).
	if !strings.Contains(m, "# TYPE numa_partition_allocator_state_generation gauge") {
		t.Errorf("state_generation is not a gauge:\n%s", grepLines(m, "state_generation"))
	}
	// Free + reserved = allocatable on node 0 memory, in the metrics too.
	if !strings.Contains(m, `numa_partition_allocator_reserved_bytes{node="0",partition="test",resource="memory"}`) {
		t.Error("no reserved_bytes for node 0 memory")
	}
	if t.Failed() {
		t.Log(grepLines(m, "numa_partition_allocator_"))
	}

	// The same registry on the loopback TCP address.
	addr := regexp.MustCompile(`serving metrics over TCP.*address=(\S+)`).FindStringSubmatch(d.stderr.String())
	if addr == nil {
		t.Fatalf("no TCP metrics address logged:\n%s", d.stderr.String())
	}
	out := httpGet(t, "http://"+addr[1]+"/metrics")
	if !strings.Contains(out, `numa_partition_allocator_admissions_total{partition="test",result="admitted"} 2`) {
		t.Fatalf("TCP metrics differ:\n%s", grepLines(out, "admissions_total"))
	}
	// Only /metrics there: the API is not reachable over TCP.
	if body := httpGet(t, "http://"+addr[1]+daemonapi.PathAllocations); !strings.Contains(body, "404") {
		t.Fatalf("API over TCP: %s", body)
	}
}

// A metrics address that is no HOST:PORT stops the daemon naming the
// flag, the value and the forms allowed. (Any address is allowed since
// issue 40: the cluster's Prometheus scrapes the partition's address.)
func TestMetricsAddrMalformed(t *testing.T) {
	dir := t.TempDir()
	code, stderr := startProcess(t, daemonSpec{dir: dir, config: writeConfig(t, dir, testConfig()), extra: []string{"--metrics-addr", "9464"}}).waitExit(30 * time.Second)
	if code == 0 || !strings.Contains(stderr, "--metrics-addr") || !strings.Contains(stderr, "missing port in address") || !strings.Contains(stderr, "want HOST:PORT") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

// A metrics address the daemon cannot take (192.0.2.1, TEST-NET-1, is no
// address of this machine; in production a port a hostNetwork pod holds)
// does not stop it: the allocator places containers, and its metrics
// stay on the socket; the log says why TCP has none.
func TestMetricsAddrUnavailableIsNotFatal(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, daemonSpec{dir: dir, config: writeConfig(t, dir, testConfig()), extra: []string{"--metrics-addr", "192.0.2.1:9464"}})
	admitSome(t, d, 1, gib)
	if m := scrape(t, d.socket); !strings.Contains(m, `numa_partition_allocator_admissions_total{partition="test",result="admitted"} 1`) {
		t.Fatalf("socket metrics:\n%s", grepLines(m, "admissions_total"))
	}
	if log := d.stderr.String(); !strings.Contains(log, "not serving metrics over TCP") || !strings.Contains(log, "192.0.2.1:9464") {
		t.Fatalf("no error about the metrics address logged:\n%s", log)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, data)
}

// TestAdmitExampleWorkloads admits the shipped example Pod and VMI through
// the CLI as the examples' comments say, label matching included.
func TestAdmitExampleWorkloads(t *testing.T) {
	sockets := t.TempDir()
	cfg := testConfig()
	for i := range cfg.Nodes {
		cfg.Nodes[i].Hugepages = map[uint64]uint64{2 * mib: 8 * gib}
	}
	startDaemon(t, daemonSpec{dir: t.TempDir(), socketDir: sockets, partition: "red", config: writeConfig(t, t.TempDir(), cfg), extra: []string{"--label", "numa-type=red"}})
	for _, ex := range []struct{ file, kind string }{{"pod-red.yaml", "Pod"}, {"vmi-hugepages.yaml", "VirtualMachineInstance"}} {
		out, code := runCLI(t, "admit", "-o", "json", "-f", "../../../examples/workloads/"+ex.file, "--socket-dir", sockets)
		// The CLI prints an Admission; the manifest's kind is manifestKind.
		var resp struct {
			daemonapi.AdmitResponse
			Kind         string `json:"kind"`
			ManifestKind string `json:"manifestKind"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &resp) != nil || resp.Kind != "Admission" || resp.ManifestKind != ex.kind || !resp.Decision.Admitted || resp.Partition != "red" {
			t.Fatalf("%s: exit %d\n%s", ex.file, code, out)
		}
		if ex.kind == "VirtualMachineInstance" {
			var hp uint64
			for _, c := range resp.Decision.Containers {
				hp += c.Memory["hugepages-2Mi"]
			}
			if hp != 4*gib {
				t.Fatalf("virt-launcher pod pins %d bytes of 2Mi pages, want the 4Gi guest memory\n%s", hp, out)
			}
		}
	}
}

// TestCLITimesOutOnAWedgedDaemon: a socket that accepts and never answers
// must not hang the client.
func TestCLITimesOutOnAWedgedDaemon(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, "stuck.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	out, code := runCLI(t, "allocations", "--socket-dir", dir, "--timeout", "300ms")
	if code != 1 || !strings.Contains(out, "stuck: ") || !strings.Contains(out, "deadline exceeded") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
