package status

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/nodeview"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// #41: status shows what each partition's own services cost the host
// (their cgroups' CPU time and memory), running services only.
func TestStatusReadsEachRunningServicesUsage(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys/fs/cgroup/node0.slice/kubelet-node0.service")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "memory.stat"), []byte("anon 41943040\nfile 10485760\ninactive_file 4194304\n"), 0o644))
	r := &statusRun{o: Options{Root: root}, mode: cgroupmode.V2, st: &Status{}, infos: map[string]systemd.UnitInfo{
		"kubelet-node0.service":    {ActiveState: "active", MainPID: 7, ControlGroup: "/node0.slice/kubelet-node0.service"},
		"containerd-node0.service": {ActiveState: "active", MainPID: 8, ControlGroup: "/node0.slice/containerd-node0.service"},
		"hugepages.service":        {ActiveState: "active", ControlGroup: "/system.slice/hugepages.service"}, // a oneshot that ran
		"mountns-node0.service":    {ActiveState: "failed"},
	}}
	units := []UnitState{{Name: "kubelet-node0.service"}, {Name: "containerd-node0.service"}, {Name: "hugepages.service"}, {Name: "mountns-node0.service"}}
	r.unitUsage(units)
	if u := units[0].Usage; u == nil || u.CPUNanoseconds != 1_500_000_000 || u.MemoryWorkingSetBytes != 46<<20 || u.MemoryAnonBytes != 40<<20 {
		t.Errorf("kubelet's usage %+v (%q), want 1.5 s, 46 MiB (anon + file − inactive file) of which 40 MiB anon", u, units[0].UsageError)
	}
	if units[1].Usage != nil || !strings.Contains(units[1].UsageError, "containerd-node0.service") {
		t.Errorf("containerd without a cgroup: %+v %q; want an error naming it", units[1].Usage, units[1].UsageError)
	}
	for _, u := range units[2:] {
		if u.Usage != nil || u.UsageError != "" {
			t.Errorf("%s (not running) was read: %+v %q", u.Name, u.Usage, u.UsageError)
		}
	}
}

// #41: a partition's daemons together, against the memory its kubelet
// reserves for them; a warning when they use more, none when they fit or
// when the record predates the reservation.
func TestStatusWeighsDaemonsAgainstKubeReserved(t *testing.T) {
	mib := func(n uint64) *uint64 { v := n << 20; return &v }
	used := []UnitState{
		{Name: "kubelet-node0.service", Usage: &nodeview.Usage{CPUNanoseconds: 2e9, MemoryWorkingSetBytes: 300 << 20, MemoryAnonBytes: 120 << 20}},
		{Name: "containerd-node0.service", Usage: &nodeview.Usage{CPUNanoseconds: 1e9, MemoryWorkingSetBytes: 250 << 20, MemoryAnonBytes: 60 << 20}},
		{Name: "hugepages-node0.service"}, // a oneshot: not read
	}
	for _, tc := range []struct {
		name     string
		reserved *uint64
		units    []UnitState
		warn     bool
	}{
		{"more than reserved", mib(500), used, true},
		{"within", mib(600), used, false},
		{"record without the reservation", nil, used, false},
		{"nothing running", mib(500), []UnitState{{Name: "kubelet-node0.service"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &statusRun{st: &Status{}}
			ps := PartitionStatus{Name: "node0", Units: tc.units}
			r.daemons(record.Partition{Name: "node0", KubeReservedMemory: tc.reserved}, &ps)
			if len(tc.units) == 1 {
				if ps.Daemons != nil {
					t.Fatalf("daemons %+v, want none read", ps.Daemons)
				}
				return
			}
			if d := ps.Daemons; d == nil || d.CPUNanoseconds != 3e9 || d.MemoryWorkingSetBytes != 550<<20 || d.MemoryAnonBytes != 180<<20 || d.KubeReservedMemoryBytes != tc.reserved {
				t.Fatalf("daemons %+v, want 3 s and 550 MiB (180 MiB anon) against %v", ps.Daemons, tc.reserved)
			}
			warned := len(r.st.Warnings) == 1 && strings.Contains(r.st.Warnings[0], "partition node0") &&
				strings.Contains(r.st.Warnings[0], "550Mi (180Mi their own") && strings.Contains(r.st.Warnings[0], "kube_reserved_memory (500Mi)")
			if warned != tc.warn || (!tc.warn && len(r.st.Warnings) > 0) {
				t.Errorf("warnings %q, want one naming 550Mi over 500Mi: %v", r.st.Warnings, tc.warn)
			}
		})
	}
}
