package daemon_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
)

// admitSome fills a daemon with a few pods and returns the acknowledged history.
func admitSome(t *testing.T, d *process, n int, size uint64) []op {
	t.Helper()
	var h []op
	for i := range n {
		p := podSpec{uid: "pod-" + string(rune('a'+i)), memory: []uint64{size}}
		resp, err := d.Client.Admit(context.Background(), p.yaml(t))
		if err != nil || !resp.Decision.Admitted {
			t.Fatalf("admit %s: %+v %v", p.uid, resp, err)
		}
		h = append(h, op{admit: &p, decision: resp.Decision, generation: resp.Generation, changed: true})
	}
	return h
}

func TestCorruptedCheckpointRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	spec := daemonSpec{dir: dir, config: writeConfig(t, dir, cfg)}
	d := startDaemon(t, spec)
	admitSome(t, d, 3, gib)
	d.stop()

	path := filepath.Join(dir, daemon.CheckpointName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// One flipped bit inside the data: still valid JSON, wrong content.
	i := bytes.Index(data, []byte(`"free":`)) + len(`"free":`)
	corrupted := bytes.Clone(data)
	corrupted[i+1] ^= 0x01 // a digit (not the first: no leading zero)
	if err := os.WriteFile(path, corrupted, 0o600); err != nil {
		t.Fatal(err)
	}

	code, stderr := startProcess(t, spec).waitExit(30 * time.Second)
	if code == 0 {
		t.Fatalf("daemon started on a corrupted checkpoint\n%s", stderr)
	}
	for _, want := range []string{"is corrupted: checksum mismatch", "refusing to start", "numa-partition allocator reset-state --partition test --state-dir " + dir} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, corrupted) {
		t.Fatal("the refused start changed the checkpoint")
	}

	// The documented recovery: move it aside (kept), start empty.
	out, err := exec.Command(daemonBinary, "allocator", "reset-state", "--partition", "test", "--state-dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("reset-state: %v\n%s", err, out)
	}
	aside, _ := filepath.Glob(path + ".reset-*")
	if len(aside) != 1 {
		t.Fatalf("reset-state output %q; files moved aside: %v", out, aside)
	}
	if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, corrupted) {
		t.Fatal("reset-state did not keep the old checkpoint")
	}
	d = startDaemon(t, spec)
	if l, err := d.Client.Allocations(context.Background()); err != nil || len(l.Allocations) != 0 || l.Generation != 0 {
		t.Fatalf("after reset: %+v %v", l, err)
	}
	// reset-state refuses while a daemon holds the state directory.
	out, err = exec.Command(daemonBinary, "allocator", "reset-state", "--partition", "test", "--state-dir", dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "stop the daemon first") {
		t.Fatalf("reset-state with a running daemon: %v\n%s", err, out)
	}
}

// TestMemoryDrift: MemTotal differs a little after a reboot (kubelet
// crash-loops on this: kubernetes issues 131253, 109996). The daemon keeps
// the assignments when they still fit and logs the drift; it refuses, with
// the recovery command, when they no longer fit.
func TestMemoryDrift(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	spec := daemonSpec{dir: dir, config: writeConfig(t, dir, cfg)}
	d := startDaemon(t, spec)
	history := admitSome(t, d, 4, 3*gib) // 12 GiB: on one node or split across both
	d.stop()

	t.Run("tolerated", func(t *testing.T) {
		drifted := testConfig()
		for i := range drifted.Nodes {
			drifted.Nodes[i].Memory -= 12 * mib // a few MiB less after a firmware update
		}
		spec := spec
		spec.config = writeConfig(t, t.TempDir(), drifted)
		d := startDaemon(t, spec)
		h, err := d.Client.Health(context.Background())
		if err != nil || len(h.Drift) == 0 {
			t.Fatalf("health after drift: %+v %v", h, err)
		}
		if !strings.Contains(d.stderr.String(), "memory drift") {
			t.Fatalf("drift not logged:\n%s", d.stderr.String())
		}
		got, err := d.Client.Allocations(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var want []allocator.Allocation
		for _, o := range history {
			want = append(want, o.decision)
		}
		if !jsonEqual(got.Allocations, want) {
			t.Fatalf("assignments changed by drift:\n got %s\nwant %s", mustJSON(got.Allocations), mustJSON(want))
		}
		st, err := d.Client.State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The memory table's total is MemTotal, as in kubelet's state file.
		if tot, want := st.State.Machine[1].MemoryMap[allocator.ResourceMemory].TotalMemSize, 16*gib-12*mib; tot != want {
			t.Fatalf("node 1 total %d, want the new total %d", tot, want)
		}
		d.stop()
	})
	t.Run("refused", func(t *testing.T) {
		shrunk := testConfig()
		for i := range shrunk.Nodes {
			shrunk.Nodes[i].Memory = 2 * gib // the assignments cannot fit any more
		}
		spec := spec
		spec.config = writeConfig(t, t.TempDir(), shrunk)
		before, _ := os.ReadFile(filepath.Join(dir, daemon.CheckpointName))
		code, stderr := startProcess(t, spec).waitExit(30 * time.Second)
		if code == 0 || !strings.Contains(stderr, "refusing to start") || !strings.Contains(stderr, "allocator reset-state --partition test") {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, daemon.CheckpointName)); !bytes.Equal(before, after) {
			t.Fatal("the refused start changed the checkpoint")
		}
	})
}

// TestJournalWithAByteFlippedInEachRecordRefused is #38's repro: four
// pods admitted, the daemon SIGKILLed, one byte flipped in each journal
// line; the restarted daemon served one allocation (the checkpoint's)
// and said nothing. It must refuse, naming the record and where it is,
// the checkpoint's generation and the reset-state recovery.
func TestJournalWithAByteFlippedInEachRecordRefused(t *testing.T) {
	dir := t.TempDir()
	spec := daemonSpec{dir: dir, config: writeConfig(t, dir, testConfig())}
	d := startDaemon(t, spec)
	admitSome(t, d, 4, gib)
	d.kill()

	path := filepath.Join(dir, daemon.JournalName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, line := range lines {
		if len(line) > 0 {
			line[len(line)/2] ^= 0x01 // the middle: never the newline
		}
	}
	corrupted := bytes.Join(lines, nil)
	if err := os.WriteFile(path, corrupted, 0o600); err != nil {
		t.Fatal(err)
	}

	code, stderr := startProcess(t, spec).waitExit(30 * time.Second)
	if code == 0 {
		t.Fatalf("the daemon started on a journal with every record corrupted\n%s", stderr)
	}
	for _, want := range []string{"journal " + path + " is corrupted: record 1 (line 1, byte offset 0)", "the checkpoint is at generation 1",
		"refusing to start", "numa-partition allocator reset-state --partition test --state-dir " + dir} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, corrupted) {
		t.Error("the refused start changed the journal")
	}
}

// TestCheckpointOfAnotherPartition: a state dir mix-up is refused.
func TestCheckpointOfAnotherPartition(t *testing.T) {
	dir := t.TempDir()
	spec := daemonSpec{dir: dir, config: writeConfig(t, dir, testConfig())}
	d := startDaemon(t, spec)
	admitSome(t, d, 1, gib)
	d.stop()
	spec.partition = "other"
	code, stderr := startProcess(t, spec).waitExit(30 * time.Second)
	if code == 0 || !strings.Contains(stderr, `belongs to partition "test", not "other"`) {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

// TestServeFromPlan runs the daemon as the rendered unit does: no
// --allocator-config, the partition planned from --config on --sysfs.
func TestServeFromPlan(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, daemonSpec{dir: dir, partition: "lowlat",
		global: []string{"--sysfs", "../../../testdata/sysfs/hwloc-32amd64-4s2n4c-cgroup2/sys", "--config", "../../../examples/4socket/config.toml"}})
	h, err := d.Client.Health(context.Background())
	if err != nil || h.Labels["example.com/pool"] != "lowlat" || h.Partition != "lowlat" {
		t.Fatalf("health %+v %v", h, err)
	}
	st, err := d.Client.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.State.Machine[6]; !ok || len(st.State.Machine) != 2 {
		t.Fatalf("machine %v, want nodes 6 and 7", mustJSON(st.State.Machine))
	}
	code, stderr := startProcess(t, daemonSpec{dir: t.TempDir(), partition: "nosuch",
		global: []string{"--sysfs", "../../../testdata/sysfs/hwloc-32amd64-4s2n4c-cgroup2/sys", "--config", "../../../examples/4socket/config.toml"}}).waitExit(30 * time.Second)
	if code == 0 || !strings.Contains(stderr, `--partition "nosuch" is not in the plan`) || !strings.Contains(stderr, "lowlat") {
		t.Fatalf("unknown partition: exit %d\n%s", code, stderr)
	}
}
