package transaction

import (
	"reflect"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// applied returns the Current of a host where d is fully applied.
func applied(d Desired) Current {
	c := Current{Files: map[string]FileState{}, Units: map[string]systemd.UnitInfo{}, Hugepages: map[HugepageKey]uint64{}, Record: &record.Record{}}
	for _, f := range d.Files {
		c.Files[f.Path] = FileState{Content: f.Content, Mode: f.Mode}
		c.Record.Files = append(c.Record.Files, record.File{Path: f.Path})
	}
	for _, u := range d.Units {
		info := systemd.UnitInfo{Name: u.Name, LoadState: "loaded", ActiveState: "active", SubState: "running"}
		if u.Enable {
			info.UnitFileState = "enabled"
		}
		c.Units[u.Name] = info
	}
	c.CPUSetsV1 = map[string]string{}
	for _, s := range d.Slices {
		info := c.Units[s.Unit]
		info.AllowedCPUs, info.AllowedMemoryNodes = s.CPUs, s.Mems
		c.Units[s.Unit] = info
		// The slice's cpuset v1 group as apply leaves it on a v1 host.
		c.CPUSetsV1[s.Unit] = s.CPUs.String() + "/" + s.Mems.String()
	}
	for _, h := range d.Hugepages {
		c.Hugepages[HugepageKey{h.Node, h.PageSize}] = h.Count
	}
	c.Record.Units = d.Units
	c.KubeletStates = map[string]KubeletStateOnHost{}
	for _, u := range d.Units {
		if u.KubeletState != nil {
			c.KubeletStates[u.Name] = KubeletStateOnHost{Stamp: u.KubeletState.Settings}
		}
	}
	return c
}

func desired(t *testing.T, mode CgroupMode, edit func(*applytest.Fixture)) Desired {
	t.Helper()
	f := applytest.NewFixture(2)
	if edit != nil {
		edit(f)
	}
	b, err := f.Typed()
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDesired(b, mode)
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
			"kubelet-state kubelet-tnode0.service: stamp its managers' settings",
			"start kubelet-tnode0.service (not active)",
			"kubelet-state kubelet-tnode1.service: stamp its managers' settings",
			"start kubelet-tnode1.service (not active)",
			"record",
		}},
		{"one service changed", desired(t, CgroupV2, func(f *applytest.Fixture) {
			f.File("kubelet-tnode1.service").Content = []byte("[Service]\nExecStart=/bin/true\n")
		}), nil, []string{
			"write /etc/systemd/system/kubelet-tnode1.service (changed)",
			"daemon-reload",
			"enable kubelet-tnode1.service",
			"restart kubelet-tnode1.service (files changed)",
			"record",
		}},
		// A pool's new count changes the oneshot's command: apply sizes
		// the pool itself and leaves the oneshot, whose restart would
		// restart every kubelet (Requires=), to run it at the next boot.
		{"the hugepages oneshot changed", desired(t, CgroupV2, func(f *applytest.Fixture) {
			f.File("tnuma-hugepages.service").Content = []byte("[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true 1\n")
			f.Plan.Partitions[1].Memory[0].Hugepages[0].Count = 6
		}), nil, []string{
			"write /etc/systemd/system/tnuma-hugepages.service (changed)",
			"daemon-reload",
			"hugepages node1 hugepages-2Mi=6",
			"enable tnuma-hugepages.service",
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
			c.Hugepages[HugepageKey{1, applytest.TestPageSize}] = 2
		}, []string{"hugepages node1 hugepages-2Mi=5", "record"}},
		{"a partition is gone", desired(t, CgroupV2, withoutLastPartition), func(c *Current) {
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

// On cgroup v1 the slice of a partition gets a cpuset v1 group, and each
// started service is moved into it (the services pin themselves).
func TestPlanCgroupV1(t *testing.T) {
	d := desired(t, CgroupHybrid, nil)
	got := stepNames(Plan(d, Current{}))
	for _, want := range []string{
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
	// Changing a slice's CPUs re-pins its services: their files change, so they restart.
	d2 := desired(t, CgroupHybrid, func(f *applytest.Fixture) { f.SetSliceCPUs("tnode0", "0-1") })
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

// NewDesired takes render's typed data as it is: the slices' cpusets, the
// pools and the ports; it adds nothing of its own on any cgroup version.
func TestNewDesired(t *testing.T) {
	for _, mode := range []CgroupMode{CgroupV1, CgroupHybrid, CgroupV2} {
		d := desired(t, mode, nil)
		if len(d.Files) != 7 {
			t.Errorf("%s: %d files, want the bundle's 7", mode, len(d.Files))
		}
		if len(d.Slices) != 2 || d.Slices[1].Unit != "tnode1.slice" || d.Slices[1].CPUs.String() != "1" || d.Slices[1].Mems.String() != "0" {
			t.Errorf("%s: slices %+v", mode, d.Slices)
		}
		if len(d.Hugepages) != 2 || d.Hugepages[1] != (record.HugepageTarget{Node: 1, PageSize: applytest.TestPageSize, Count: 5}) {
			t.Errorf("%s: hugepages %+v", mode, d.Hugepages)
		}
		if len(d.Ports) != 4 || d.Ports[0].Port != 20250 || d.Ports[0].Unit != "kubelet-tnode0.service" {
			t.Errorf("%s: ports = %+v", mode, d.Ports)
		}
	}
	// The slice's file and its cpuset disagree: the cpuset is what apply
	// sets (render writes both from one value).
	d := desired(t, CgroupV2, func(f *applytest.Fixture) { f.Bundle.Units[1].Cpuset = &bundle.Cpuset{CPUs: bitmask.NewCPUSet(1)} })
	if d.Slices[0].Unit != "tnode0.slice" || d.Slices[0].CPUs.String() != "1" {
		t.Errorf("slices %+v", d.Slices)
	}

	for _, tc := range []struct {
		name string
		edit func(*bundle.Bundle)
		want string
	}{
		{"path escapes", func(b *bundle.Bundle) { b.Files[0].Path = "../etc/passwd" }, `"../etc/passwd": must be relative`},
		{"absolute path", func(b *bundle.Bundle) { b.Files[0].Path = "/etc/passwd" }, `"/etc/passwd": must be relative`},
		{"a path apply does not write (#38)", func(b *bundle.Bundle) { b.Files[0].Path = "etc/hostname" }, `"etc/hostname": is outside the directories apply writes files in`},
		{"numa-partition's own state", func(b *bundle.Bundle) { b.Files[0].Path = record.Path }, "numa-partition's own state"},
		{"a unit's file missing", func(b *bundle.Bundle) { b.Units[0].Files = append(b.Units[0].Files, "etc/x.conf") }, "lists file etc/x.conf, which is not in the bundle"},
		{"a service with a cpuset", func(b *bundle.Bundle) { b.Units[3].Cpuset = &bundle.Cpuset{} }, "only slices and scopes take one"},
		{"a pool twice", func(b *bundle.Bundle) { b.Hugepages = append(b.Hugepages, b.Hugepages[0]) }, "node0 hugepages-2Mi=4 is listed twice"},
	} {
		b, err := applytest.NewFixture(2).Typed()
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(&b)
		_, err = NewDesired(b, CgroupV2)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
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
		f := applytest.NewFixture(2)
		f.Plan.Partitions[1].Allocator.Mode = config.AllocatorModeNRI
		b, err := f.Typed()
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewDesired(b, mode)
		if err == nil || !strings.Contains(err.Error(), `partition tnode1: allocator mode "nri" needs cgroup v2`) {
			t.Errorf("%s: %v", mode, err)
		}
		if _, err := NewDesired(b, CgroupV2); err != nil {
			t.Errorf("cgroup v2: %v", err)
		}
	}
}

// Stale network objects are removed after the reload and before any unit
// (re)starts, and the record is rewritten even when no file changed.
func TestPlanForgetsStaleNetworkBeforeRestarts(t *testing.T) {
	d := desired(t, CgroupV2, nil)
	c := applied(d)
	c.StaleNetwork = []StaleNetwork{{Bridge: "npbr0"}, {Namespace: "np-tnode0", Devices: []string{"ens5f1"}}}
	var got []string
	for _, s := range Plan(d, c) {
		got = append(got, s.String())
	}
	want := []string{
		"forget-network bridge npbr0 (no longer planned)",
		"forget-network devices ens5f1 of namespace np-tnode0 (back to the host's) (no longer planned)",
		"record",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A pending record lists both generations' network objects: a kill
// before the new one finished leaves remove every bridge either made.
func TestMergeNetwork(t *testing.T) {
	a := &record.Network{Bridges: []string{"npbr1"}, Namespaces: []bundle.Namespace{{Name: "np-a", Devices: []string{"x"}}}}
	b := &record.Network{Bridges: []string{"npbr0"}, NAT: true, Namespaces: []bundle.Namespace{{Name: "np-a", Devices: []string{"y"}}, {Name: "np-b"}}}
	m := mergeNetwork(a, b)
	want := &record.Network{Bridges: []string{"npbr1", "npbr0"}, NAT: true,
		Namespaces: []bundle.Namespace{{Name: "np-a", Devices: []string{"x", "y"}}, {Name: "np-b"}}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("merged %+v, want %+v", m, want)
	}
	if a.Namespaces[0].Devices[0] != "x" || len(a.Namespaces[0].Devices) != 1 {
		t.Fatalf("merging changed its input: %+v", a)
	}
}

// withoutLastPartition takes the fixture's second partition, tnode1, off
// its plan and bundle.
func withoutLastPartition(f *applytest.Fixture) {
	var files []bundle.File
	for _, bf := range f.Bundle.Files {
		if !strings.Contains(bf.Path, "tnode1") {
			files = append(files, bf)
		}
	}
	var units []bundle.Unit
	for _, u := range f.Bundle.Units {
		if u.Partition != "tnode1" {
			units = append(units, u)
		}
	}
	f.Bundle.Files, f.Bundle.Units = files, units
	f.Plan.Partitions = f.Plan.Partitions[:1]
}
