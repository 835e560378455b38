package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

// fakeSysfs makes nodes 0 and 1 with 2 MiB and 1 GiB pools holding pages.
func fakeSysfs(t *testing.T, pages map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for i, node := range []string{"node0", "node1"} {
		// 16 GiB each: Fill bounds the pages by it.
		meminfo := fmt.Sprintf("Node %d MemTotal:       16777216 kB\nNode %d MemFree:        16000000 kB\n", i, i)
		if err := os.MkdirAll(filepath.Join(root, "devices", "system", "node", node), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "devices", "system", "node", node, "meminfo"), []byte(meminfo), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, size := range []string{"hugepages-2048kB", "hugepages-1048576kB"} {
			dir := filepath.Join(root, "devices", "system", "node", node, "hugepages", size)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			v := pages[node+"/"+size]
			if v == "" {
				v = "0"
			}
			if err := os.WriteFile(filepath.Join(dir, "nr_hugepages"), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func specs(t *testing.T, args ...string) []hugepool.Pool {
	t.Helper()
	var out []hugepool.Pool
	for _, a := range args {
		s, err := hugepool.ParsePool(a)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func pool(t *testing.T, root, node, size string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "devices", "system", "node", node, "hugepages", size, "nr_hugepages"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestApplyHugepagesLargestFirst(t *testing.T) {
	root := fakeSysfs(t, nil)
	var order []string
	write := func(path string, n uint64) error {
		order = append(order, filepath.Base(filepath.Dir(path))+"@"+filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(path)))))
		return hugepool.Write(path, n)
	}
	var out bytes.Buffer
	err := applyHugepages(&out, root, specs(t, "0:2Mi=512", "1:2Mi=512", "0:1Gi=4", "1:1Gi=0"), bitmask.NodeSet{}, write)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, " "); got != "hugepages-1048576kB@node0 hugepages-1048576kB@node1 hugepages-2048kB@node0 hugepages-2048kB@node1" {
		t.Errorf("write order %s: 1 GiB pages must come before 2 MiB pages fragment memory", got)
	}
	if pool(t, root, "node0", "hugepages-1048576kB") != "4" || pool(t, root, "node1", "hugepages-2048kB") != "512" {
		t.Errorf("pools not set")
	}
	if !strings.Contains(out.String(), "node 0: 4 pages of 1Gi (were 0)") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestApplyHugepagesShortfallFailsLoudly(t *testing.T) {
	root := fakeSysfs(t, nil)
	// The kernel finds only half the 1 GiB pages on node 1.
	short := func(path string, n uint64) error {
		if strings.Contains(path, "node1") && strings.Contains(path, "1048576kB") {
			n /= 2
		}
		return hugepool.Write(path, n)
	}
	err := applyHugepages(&bytes.Buffer{}, root, specs(t, "0:1Gi=4", "1:1Gi=4", "1:2Mi=8"), bitmask.NodeSet{}, short)
	if err == nil || !strings.Contains(err.Error(), "node 1: wanted 4 pages of 1Gi, the kernel allocated 2") {
		t.Fatalf("want a shortfall naming node 1, got %v", err)
	}
	// The other pools are still set: one run reports every problem.
	if pool(t, root, "node1", "hugepages-2048kB") != "8" {
		t.Errorf("node1 2Mi pool not set after the 1Gi shortfall")
	}
}

func TestApplyHugepagesPagesInUse(t *testing.T) {
	root := fakeSysfs(t, nil)
	stuck := func(path string, n uint64) error { return hugepool.Write(path, n+3) }
	err := applyHugepages(&bytes.Buffer{}, root, specs(t, "0:2Mi=0"), bitmask.NodeSet{}, stuck)
	if err == nil || !strings.Contains(err.Error(), "3 remain") {
		t.Fatalf("want pages-in-use error, got %v", err)
	}
}

func TestApplyHugepagesUnlistedPool(t *testing.T) {
	root := fakeSysfs(t, map[string]string{"node1/hugepages-1048576kB": "2"})
	err := applyHugepages(&bytes.Buffer{}, root, specs(t, "0:2Mi=8"), bitmask.NodeSet{}, hugepool.Write)
	if err == nil || !strings.Contains(err.Error(), "node 1, hugepages-1048576kB holds 2 pages the plan does not list") {
		t.Fatalf("want unlisted-pool error, got %v", err)
	}
}

// #37: on the ocp-bm-worker1 dump (128 pages of 2 MiB on node 0 that no
// config lists) the boot oneshot exited 2 and, every kubelet requiring
// it, no partition started. On the partitions' nodes (--nodes) a pool the
// plan does not list is freed when nobody uses its pages.
func TestApplyHugepagesFreesUnlistedPagesNobodyUses_Issue37(t *testing.T) {
	root := copyNodeDirs(t, "ocp-bm-worker1")
	var out bytes.Buffer
	err := applyHugepages(&out, root, nil, bitmask.NewNodeSet(0, 1), rewrite)
	if err != nil {
		t.Fatalf("unused unlisted pages block the oneshot: %v", err)
	}
	if got := pool(t, root, "node0", "hugepages-2048kB"); got != "0" {
		t.Errorf("node0 2Mi pool is %s, want 0 (freed)", got)
	}
	if !strings.Contains(out.String(), "node 0: 0 pages of 2Mi (were 128)") {
		t.Errorf("the freed pool is not reported: %q", out.String())
	}
	// A unit rendered before --nodes existed refuses them, as before.
	root = copyNodeDirs(t, "ocp-bm-worker1")
	err = applyHugepages(&bytes.Buffer{}, root, nil, bitmask.NodeSet{}, hugepool.Write)
	if err == nil || !strings.Contains(err.Error(), "node 0, hugepages-2048kB holds 128 pages the plan does not list") {
		t.Fatalf("want the unlisted pool refused without --nodes, got %v", err)
	}
}

// Pages in use are never freed: the kernel keeps them, and the oneshot
// says how many and what to do. A node that is no partition's (excluded:
// nobody's memory) keeps its pool, refused as before.
func TestApplyHugepagesUnlistedPagesInUseOrOnOtherNodes_Issue37(t *testing.T) {
	root := fakeSysfs(t, map[string]string{"node1/hugepages-1048576kB": "5"})
	inUse := func(path string, n uint64) error {
		if strings.Contains(path, "node1/hugepages/hugepages-1048576kB") {
			return hugepool.Write(path, n+2) // 2 pages stay: in use
		}
		return hugepool.Write(path, n)
	}
	err := applyHugepages(&bytes.Buffer{}, root, specs(t, "0:2Mi=8"), bitmask.NewNodeSet(0, 1), inUse)
	if err == nil || !strings.Contains(err.Error(), "node 1: 2 pages of 1Gi the plan does not list are in use and cannot be freed") {
		t.Fatalf("want the pages in use named, got %v", err)
	}
	if pool(t, root, "node0", "hugepages-2048kB") != "8" {
		t.Errorf("the listed pool is not set beside the refusal")
	}

	root = fakeSysfs(t, map[string]string{"node1/hugepages-1048576kB": "5"})
	err = applyHugepages(&bytes.Buffer{}, root, specs(t, "0:2Mi=8"), bitmask.NewNodeSet(0), hugepool.Write)
	if err == nil || !strings.Contains(err.Error(), "node 1, hugepages-1048576kB holds 5 pages the plan does not list") {
		t.Fatalf("want node 1's pool refused (not a partition's node), got %v", err)
	}
	if got := pool(t, root, "node1", "hugepages-1048576kB"); got != "5" {
		t.Errorf("node 1's pool is %s, want 5 (left alone)", got)
	}
}

// rewrite sets a pool in a copied dump, whose files (unlike sysfs's) keep
// what a shorter write leaves of the old number.
func rewrite(path string, n uint64) error {
	return os.WriteFile(path, []byte(fmt.Sprint(n)), 0o644)
}

// copyNodeDirs copies a fixture's sys/devices/system/node into a
// temporary sysfs root the oneshot may write.
func copyNodeDirs(t *testing.T, fixture string) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join(fixtureSys(fixture), "devices", "system", "node")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, "devices", "system", "node", rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // links to devices: not the pools'
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestApplyHugepagesBadInputChangesNothing(t *testing.T) {
	root := fakeSysfs(t, nil)
	for _, args := range [][]string{
		{"0:2Mi=8", "2:2Mi=8"},  // node 2 does not exist
		{"0:2Mi=8", "0:64Ki=8"}, // unsupported size
		{"0:2Mi=8", "0:2Mi=16"}, // twice
	} {
		err := applyHugepages(&bytes.Buffer{}, root, specs(t, args...), bitmask.NodeSet{}, hugepool.Write)
		if err == nil {
			t.Errorf("%v: want an error", args)
		}
		if pool(t, root, "node0", "hugepages-2048kB") != "0" {
			t.Fatalf("%v: a pool was written despite the error", args)
		}
	}
	for _, bad := range []string{"0:2Mi", "x:2Mi=1", "0:3Mi=1", "0:2Mi=-1", "0-2Mi=1", "+1:2Mi=1"} {
		if _, err := hugepool.ParsePool(bad); err == nil {
			t.Errorf("ParseHugepageSpec(%q): want an error", bad)
		}
	}
}

// Issue 38 item 8: `hugepages apply 0:2Mi=18446744073709551615` was
// written to the kernel unchecked, which then takes every free page it
// can. Counts are bounded: the pages' bytes within 64 bits by the
// argument's reader, and each node's pages together by its memory,
// before anything is written.
func TestApplyHugepagesBoundsTheCount_Issue38Item8(t *testing.T) {
	for _, a := range []string{"0:2Mi=18446744073709551615", "0:1Gi=17179869184", "1024:2Mi=1", "0:1Ki=1", "0:3Ki=1"} {
		if _, err := hugepool.ParsePool(a); err == nil {
			t.Errorf("%s: accepted", a)
		}
	}
	root := fakeSysfs(t, nil)
	written := 0
	count := func(path string, n uint64) error { written++; return hugepool.Write(path, n) }
	err := applyHugepages(&bytes.Buffer{}, root, specs(t, "0:1Gi=8", "0:2Mi=4097", "1:1Gi=16"), bitmask.NodeSet{}, count)
	if err == nil || err.Error() != "node 0: the hugepages asked for (16386Mi) exceed its memory (16Gi); nothing was written" {
		t.Errorf("got %v", err)
	}
	if written != 0 {
		t.Errorf("%d pools written", written)
	}
	if err := applyHugepages(&bytes.Buffer{}, root, specs(t, "0:1Gi=8", "0:2Mi=4096", "1:1Gi=16"), bitmask.NodeSet{}, count); err != nil {
		t.Errorf("pages that fit: %v", err)
	}
}
