package drift

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

func TestSliceCgroup(t *testing.T) {
	for in, want := range map[string]string{"-.slice": "/", "node1.slice": "/node1.slice", "a-b.slice": "/a.slice/a-b.slice"} {
		if got := SliceCgroup(in); got != want {
			t.Errorf("SliceCgroup(%q) = %q, want %q", in, got, want)
		}
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadEffectiveCpuset(t *testing.T) {
	root := t.TempDir()
	write(t, root, "sys/fs/cgroup/a.slice/a-b.slice/cpuset.cpus.effective", "0-3\n")
	write(t, root, "sys/fs/cgroup/a.slice/a-b.slice/cpuset.mems.effective", "1\n")
	write(t, root, "sys/fs/cgroup/cpuset/a.slice/a-b.slice/cpuset.effective_cpus", "4-7\n")
	write(t, root, "sys/fs/cgroup/cpuset/a.slice/a-b.slice/cpuset.effective_mems", "0\n")
	r := fsutil.NewRoot(root)
	if got, want := ReadEffectiveCpuset(r, true, "a-b.slice"), (Cpuset{CPUs: "0-3", Mems: "1"}); got != want {
		t.Errorf("v2: %+v, want %+v", got, want)
	}
	if got, want := ReadEffectiveCpuset(r, false, "a-b.slice"), (Cpuset{CPUs: "4-7", Mems: "0"}); got != want {
		t.Errorf("v1: %+v, want %+v", got, want)
	}
	if got := ReadEffectiveCpuset(r, true, "other.slice"); got != (Cpuset{}) {
		t.Errorf("no group: %+v, want empty", got)
	}
}

func TestCpusetDifferences(t *testing.T) {
	cpus, mems := bitmask.MustParseCPUList("0-3"), bitmask.MustParseNodeList("1")
	for _, c := range []struct {
		now  Cpuset
		want []string
	}{
		{Cpuset{CPUs: "0-3", Mems: "1"}, nil},
		{Cpuset{CPUs: "0,1,2,3", Mems: "1"}, nil}, // one set, written another way
		{Cpuset{}, nil}, // not read: the caller says why
		{Cpuset{CPUs: "0-1", Mems: "1"}, []string{"s.slice runs on CPUs 0-1, applied 0-3"}},
		{Cpuset{CPUs: "0-3", Mems: "0-1"}, []string{"s.slice runs on memory nodes 0-1, applied 1"}},
		{Cpuset{CPUs: "junk", Mems: "0"}, []string{"s.slice runs on CPUs junk, applied 0-3", "s.slice runs on memory nodes 0, applied 1"}},
	} {
		var got []string
		for _, d := range CpusetDifferences("s.slice", cpus, mems, c.now) {
			got = append(got, d.String())
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%+v: %q, want %q", c.now, got, c.want)
		}
	}
	long := Cpuset{CPUs: strings.Repeat("9", 500)}
	if s := CpusetDifferences("s.slice", cpus, mems, long)[0].String(); len(s) > 200 || !strings.Contains(s, "(500 bytes)") {
		t.Errorf("a long read is not bounded: %q", s)
	}
}

func TestPoolDifferences(t *testing.T) {
	const mi2, gi1 = 2 << 20, 1 << 30
	planned := []hugepool.Pool{{Node: 0, PageSize: mi2, Count: 512}, {Node: 0, PageSize: gi1, Count: 2}, {Node: 1, PageSize: mi2, Count: 8}, {Node: 5, PageSize: mi2, Count: 1}}
	nodes := map[int][]numa.Hugepages{
		0: {{PageSize: mi2, Total: 512}},        // 1Gi: no such pool, 0 pages
		1: {{PageSize: mi2, Total: 7, Free: 7}}, // one short
	} // node 5 not read: not compared
	var got []string
	for _, d := range PoolDifferences(planned, nodes) {
		got = append(got, d.String())
	}
	want := []string{"node0 hugepages-1Gi: 2 pages planned, 0 now", "node1 hugepages-2Mi: 8 pages planned, 7 now"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if d := PoolDifferences(planned[:1], nodes); len(d) != 0 {
		t.Errorf("a pool as planned is a difference: %v", d)
	}
}
