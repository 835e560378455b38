package apply

import (
	"reflect"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
	bundle "github.com/numa-partition/numa-partition/slices/render"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// applied returns the Current of a host where d is fully applied.
func applied(d Desired) Current {
	c := Current{Files: map[string]FileState{}, Units: map[string]systemd.UnitInfo{}, Hugepages: map[HugepageKey]uint64{}, Record: &Record{}}
	for _, f := range d.Files {
		c.Files[f.Path] = FileState{Content: f.Content, Mode: f.Mode}
		c.Record.Files = append(c.Record.Files, RecordFile{Path: f.Path})
	}
	for _, u := range d.Units {
		info := systemd.UnitInfo{Name: u.Name, LoadState: "loaded", ActiveState: "active", SubState: "running"}
		if u.Enable {
			info.UnitFileState = "enabled"
		}
		c.Units[u.Name] = info
	}
	for _, s := range d.Slices {
		info := c.Units[s.Unit]
		info.AllowedCPUs, info.AllowedMemoryNodes = s.CPUs, s.Mems
		c.Units[s.Unit] = info
	}
	for _, h := range d.Hugepages {
		c.Hugepages[HugepageKey{h.Node, h.PageSize}] = h.Count
	}
	c.Record.Units = d.Units
	return c
}

func desired(t *testing.T, mode CgroupMode, edit func(*fixture)) Desired {
	t.Helper()
	f := newFixture(2)
	if edit != nil {
		edit(f)
	}
	d, err := NewDesired(f.plan, f.bundle, mode)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func stepNames(steps []Step) []string {
	var s []string
	for _, st := range steps {
		s = append(s, st.String())
	}
	return s
}

func TestPlan(t *testing.T) {
	base := desired(t, CgroupV2, nil)
	for _, tc := range []struct {
		name string
		d    Desired
		cur  func(c *Current)
		want []string
	}{
		{"nothing to do", base, nil, nil},
		{"fresh host, cgroup v2", base, func(c *Current) { *c = Current{} }, []string{
			"write /etc/systemd/system/containerd-tnode0.service (new)",
			"write /etc/systemd/system/containerd-tnode1.service (new)",
			"write /etc/systemd/system/kubelet-tnode0.service (new)",
			"write /etc/systemd/system/kubelet-tnode1.service (new)",
			"write /etc/systemd/system/tnode0.slice (new)",
			"write /etc/systemd/system/tnode1.slice (new)",
			"write /etc/systemd/system/tnuma-hugepages.service (new)",
			"daemon-reload",
			"hugepages node0 hugepages-2Mi=4",
			"hugepages node1 hugepages-2Mi=5",
			"start tnode0.slice (not active)",
			"set-property --runtime tnode0.slice AllowedCPUs=0 AllowedMemoryNodes=0",
			"start tnode1.slice (not active)",
			"set-property --runtime tnode1.slice AllowedCPUs=1 AllowedMemoryNodes=0",
			"enable tnuma-hugepages.service",
			"enable containerd-tnode0.service",
			"enable containerd-tnode1.service",
			"enable kubelet-tnode0.service",
			"enable kubelet-tnode1.service",
			"start tnuma-hugepages.service (not active)",
			"start containerd-tnode0.service (not active)",
			"start containerd-tnode1.service (not active)",
			"start kubelet-tnode0.service (not active)",
			"start kubelet-tnode1.service (not active)",
			"record",
		}},
		{"one service changed", desired(t, CgroupV2, func(f *fixture) {
			f.file("kubelet-tnode1.service").Content = []byte("[Service]\nExecStart=/bin/true\n")
		}), nil, []string{
			"write /etc/systemd/system/kubelet-tnode1.service (changed)",
			"daemon-reload",
			"enable kubelet-tnode1.service",
			"restart kubelet-tnode1.service (files changed)",
			"record",
		}},
		{"mode only", base, func(c *Current) {
			p := "etc/systemd/system/tnode1.slice"
			c.Files[p] = FileState{Content: c.Files[p].Content, Mode: 0o600}
		}, []string{
			"write /etc/systemd/system/tnode1.slice (mode -rw-------)",
			"daemon-reload",
			"set-property --runtime tnode1.slice AllowedCPUs=1 AllowedMemoryNodes=0",
			"record",
		}},
		{"crashed service: start only, no reload, no record", base, func(c *Current) {
			u := c.Units["containerd-tnode0.service"]
			u.ActiveState, u.SubState = "failed", "failed"
			c.Units["containerd-tnode0.service"] = u
		}, []string{"start containerd-tnode0.service (not active)"}},
		{"live CPUs drifted", base, func(c *Current) {
			u := c.Units["tnode0.slice"]
			u.AllowedCPUs = bitmask.NewCPUSet(0, 1)
			c.Units["tnode0.slice"] = u
		}, []string{"set-property --runtime tnode0.slice AllowedCPUs=0 AllowedMemoryNodes=0", "record"}},
		{"hugepages changed", base, func(c *Current) {
			c.Hugepages[HugepageKey{1, testPageSize}] = 2
		}, []string{"hugepages node1 hugepages-2Mi=5", "record"}},
		{"a partition is gone", desired(t, CgroupV2, func(f *fixture) {
			var files []bundle.File
			for _, bf := range f.bundle.Files {
				if !strings.Contains(bf.Path, "tnode1") {
					files = append(files, bf)
				}
			}
			var units []bundle.Unit
			for _, u := range f.bundle.Units {
				if u.Partition != "tnode1" {
					units = append(units, u)
				}
			}
			f.bundle.Files, f.bundle.Units = files, units
			f.plan.Partitions = f.plan.Partitions[:1]
		}), func(c *Current) {
			*c = applied(base)
		}, []string{
			"stop kubelet-tnode1.service (no longer planned)",
			"stop containerd-tnode1.service (no longer planned)",
			"stop tnode1.slice (no longer planned)",
			"disable containerd-tnode1.service (no longer planned)",
			"disable kubelet-tnode1.service (no longer planned)",
			"remove /etc/systemd/system/containerd-tnode1.service (no longer rendered)",
			"remove /etc/systemd/system/kubelet-tnode1.service (no longer rendered)",
			"remove /etc/systemd/system/tnode1.slice (no longer rendered)",
			"daemon-reload",
			"record",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := applied(base) // the host runs the base fixture
			if tc.cur != nil {
				tc.cur(&c)
			}
			got := stepNames(Plan(tc.d, c))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// On cgroup v1 the services of a partition get a pinning drop-in, the
// slice a cpuset v1 group, and each started service is moved into it.
func TestPlanCgroupV1(t *testing.T) {
	d := desired(t, CgroupHybrid, nil)
	got := stepNames(Plan(d, Current{}))
	for _, want := range []string{
		"write /etc/systemd/system/kubelet-tnode1.service.d/90-numa-partition-cgroup-v1.conf (new)",
		"cpuset-v1 tnode1.slice cpus=1 mems=0",
		"attach-v1 kubelet-tnode1.service to tnode1.slice",
	} {
		if !contains(got, want) {
			t.Errorf("v1 plan lacks %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if contains(got, "attach-v1 tnuma-hugepages.service to tnode0.slice") {
		t.Error("a host-wide unit was attached to a partition")
	}
	// Changing a slice's CPUs re-pins its services: drop-ins change, so they restart.
	d2 := desired(t, CgroupHybrid, func(f *fixture) {
		s := f.file("tnode0.slice")
		s.Content = []byte(strings.Replace(string(s.Content), "AllowedCPUs=0", "AllowedCPUs=0-1", 1))
	})
	got = stepNames(Plan(d2, applied(d)))
	for _, want := range []string{"restart kubelet-tnode0.service (files changed)", "cpuset-v1 tnode0.slice cpus=0-1 mems=0", "attach-v1 kubelet-tnode0.service to tnode0.slice"} {
		if !contains(got, want) {
			t.Errorf("slice change on v1 lacks %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if contains(got, "restart kubelet-tnode1.service (files changed)") {
		t.Errorf("an untouched partition was restarted:\n%s", strings.Join(got, "\n"))
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestNewDesired(t *testing.T) {
	d := desired(t, CgroupV1, nil)
	var dropIn *bundle.File
	for i, f := range d.Files {
		if f.Path == "etc/systemd/system/containerd-tnode1.service.d/"+V1DropIn {
			dropIn = &d.Files[i]
		}
	}
	if dropIn == nil {
		t.Fatal("no v1 drop-in for containerd-tnode1.service")
	}
	for k, want := range map[string]string{"CPUAffinity": "1", "NUMAPolicy": "bind", "NUMAMask": "0"} {
		if v, _ := unitValue(dropIn.Content, "Service", k); v != want {
			t.Errorf("drop-in %s=%q, want %q", k, v, want)
		}
	}
	if got := desired(t, CgroupV2, nil); len(got.Files) != 7 {
		t.Errorf("cgroup v2: %d files, want the bundle's 7", len(got.Files))
	}
	pinned := desired(t, CgroupV1, func(f *fixture) {
		k := f.file("kubelet-tnode0.service")
		k.Content = append(k.Content, []byte("[Service]\nCPUAffinity=0\n")...)
	})
	for _, f := range pinned.Files {
		if strings.HasPrefix(f.Path, "etc/systemd/system/kubelet-tnode0.service.d/") {
			t.Errorf("a service that pins itself got a drop-in: %s", f.Path)
		}
	}
	if len(d.Ports) != 4 || d.Ports[0].Port != 20250 || d.Ports[0].Unit != "kubelet-tnode0.service" {
		t.Errorf("ports = %+v", d.Ports)
	}

	for _, tc := range []struct {
		name string
		edit func(*fixture)
		want string
	}{
		{"path escapes", func(f *fixture) { f.bundle.Files[0].Path = "../etc/passwd" }, `"../etc/passwd": must be relative`},
		{"absolute path", func(f *fixture) { f.bundle.Files[0].Path = "/etc/passwd" }, `"/etc/passwd": must be relative`},
		{"bad CPUs", func(f *fixture) {
			f.file("tnode0.slice").Content = []byte("[Slice]\nAllowedCPUs=zero\n")
		}, `tnode0.slice: AllowedCPUs="zero"`},
		{"hugepages planned twice", func(f *fixture) {
			f.plan.Partitions[1].Memory[0].Node = 0
		}, "node0 hugepages-2Mi=5 is planned by partitions tnode0 and tnode1"},
		{"bad metricsAddr", func(f *fixture) { f.plan.Partitions[0].Allocator.MetricsAddr = "localhost" }, `metricsAddr "localhost"`},
	} {
		f := newFixture(2)
		tc.edit(f)
		_, err := NewDesired(f.plan, f.bundle, CgroupV2)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestUnitValue(t *testing.T) {
	content := []byte(`# comment AllowedCPUs=9
[Unit]
AllowedCPUs=8
[Slice]
AllowedCPUs=0-3
 AllowedCPUs = 4-7 
; AllowedCPUs=5
CPUQuota=\
  50%
[Service]
AllowedCPUs=9
`)
	for _, tc := range []struct {
		section, key, want string
		found              bool
	}{
		{"Slice", "AllowedCPUs", "4-7", true},
		{"Slice", "CPUQuota", "50%", true},
		{"Service", "AllowedCPUs", "9", true},
		{"Slice", "AllowedMemoryNodes", "", false},
	} {
		got, ok := unitValue(content, tc.section, tc.key)
		if got != tc.want || ok != tc.found {
			t.Errorf("[%s] %s = %q, %v; want %q, %v", tc.section, tc.key, got, ok, tc.want, tc.found)
		}
	}
}

func TestSliceCgroup(t *testing.T) {
	for in, want := range map[string]string{
		"node0.slice":      "/node0.slice",
		"system.slice":     "/system.slice",
		"numa-node0.slice": "/numa.slice/numa-node0.slice",
		"a-b-c.slice":      "/a.slice/a-b.slice/a-b-c.slice",
		"-.slice":          "/",
	} {
		if got := sliceCgroup(in); got != want {
			t.Errorf("sliceCgroup(%q) = %q, want %q", in, got, want)
		}
	}
}

// nri mode needs cgroup v2: apply refuses it on v1 before touching anything.
func TestNewDesiredRefusesNRIOnCgroupV1(t *testing.T) {
	for _, mode := range []CgroupMode{CgroupV1, CgroupHybrid} {
		f := newFixture(2)
		f.plan.Partitions[1].Allocator.Mode = planner.AllocatorModeNRI
		_, err := NewDesired(f.plan, f.bundle, mode)
		if err == nil || !strings.Contains(err.Error(), `partition tnode1: allocator mode "nri" needs cgroup v2`) {
			t.Errorf("%s: %v", mode, err)
		}
		if _, err := NewDesired(f.plan, f.bundle, CgroupV2); err != nil {
			t.Errorf("cgroup v2: %v", err)
		}
	}
}
