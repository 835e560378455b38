package status

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
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
	if u := units[0].Usage; u == nil || u.CPUNanoseconds != 1_500_000_000 || u.MemoryWorkingSetBytes != 46<<20 {
		t.Errorf("kubelet's usage %+v (%q), want 1.5 s and 46 MiB (anon + file − inactive file)", u, units[0].UsageError)
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
