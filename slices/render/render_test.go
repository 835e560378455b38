package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

func TestRenderDaemonCPUsFallback(t *testing.T) {
	plan := shownPartitions()
	// Host CPUs only on node0: node1's daemons share its pods' CPUs.
	plan.Host.ReservedCPUs = bitmask.NewCPUSet(0)
	plan.Partitions[1].HostReservedCPUs = bitmask.CPUSet{}
	plan.Partitions[1].CPUs = bitmask.MustParseCPUList("4-7")
	b, err := Render(plan)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(b.Warnings, func(w string) bool { return strings.Contains(w, "partition node1 has no host-reserved CPU") }) {
		t.Fatalf("warnings %v", b.Warnings)
	}
	unit := fileContent(t, b, unitPath(kubeletUnit("node1")))
	if !strings.Contains(unit, "\nCPUAffinity=4-7\n") {
		t.Errorf("kubelet-node1 not on its partition's CPUs:\n%s", unit)
	}
	// Its static CPU Manager is shown the host's CPU on its own node,
	// not the whole machine (kubeletgen.Machine.ShownHostCPUs).
	flat := strings.Join(strings.Fields(strings.ReplaceAll(unit, "\\\n", " ")), " ")
	if !strings.Contains(flat, " view nodes --nodes 1 --host-cpus 0'") {
		t.Errorf("kubelet-node1 is not shown its node with the host's CPU 0:\n%s", unit)
	}
	if slices.ContainsFunc(b.Warnings, func(w string) bool { return strings.Contains(w, "whole machine") }) {
		t.Errorf("warnings %v", b.Warnings)
	}
}

func TestUnitsAndFiles(t *testing.T) {
	b, err := Render(seedPlan())
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for i, f := range b.Files {
		paths[f.Path] = true
		if i > 0 && b.Files[i-1].Path >= f.Path {
			t.Errorf("files not sorted: %s before %s", b.Files[i-1].Path, f.Path)
		}
		if strings.HasPrefix(f.Path, "/") {
			t.Errorf("%s: paths are relative to the root", f.Path)
		}
	}
	for i, u := range b.Units {
		if i > 0 && (b.Units[i-1].Phase > u.Phase || b.Units[i-1].Phase == u.Phase && b.Units[i-1].Name >= u.Name) {
			t.Errorf("units not sorted by phase, name: %s before %s", b.Units[i-1].Name, u.Name)
		}
		if len(u.Files) == 0 {
			t.Errorf("%s has no files", u.Name)
		}
		for _, f := range u.Files {
			if !paths[f] {
				t.Errorf("%s names %s, which is not in the bundle", u.Name, f)
			}
		}
	}
	kubelet := b.Units[len(b.Units)-1]
	if kubelet.Name != "kubelet-node1.service" || kubelet.Phase != bundle.PhaseKubelet || !kubelet.Enable || !kubelet.Start ||
		strings.Join(kubelet.Files, " ") != "etc/numa-partition/kubelet-node1.yaml etc/systemd/system/kubelet-node1.service" {
		t.Errorf("last unit %+v", kubelet)
	}
}

// BenchmarkRender renders the examples' plans, then numatest's big
// hosts' (bighosts_test.go).
func BenchmarkRender(b *testing.B) {
	for _, e := range examples {
		b.Run(e.name, func(b *testing.B) {
			plan, _ := e.load(b)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Render(plan); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	benchRenderBigHosts(b)
}

// TestContainerdConfig: the containerd 2 (version 3) config carries the
// partition's own sockets and state, and the sandbox image only when set.
func TestContainerdConfig(t *testing.T) {
	plan := seedPlan()
	plan.Partitions[1].Runtime.SandboxImage = "registry.example.internal/pause:3.10"
	plan.Partitions[1].Runtime.CNIConfDir = "/etc/cni/net.d-node1"
	b, err := Render(plan)
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(name string) string { return fileContent(t, b, "etc/numa-partition/containerd-"+name+".toml") }
	node0, node1 := cfg("node0"), cfg("node1")
	for _, want := range []string{"version = 3\n", `socket_path = "/run/containerd-node0/nri.sock"`,
		`Root = "/run/containerd-node0/runc"`, `conf_dir = "/etc/cni/net.d"`, `bin_dirs = ["/opt/cni/bin"]`} {
		if !strings.Contains(node0, want) {
			t.Errorf("node0's containerd config lacks %q:\n%s", want, node0)
		}
	}
	if strings.Contains(node0, "pinned_images") {
		t.Errorf("node0 sets no sandbox image, its config pins one:\n%s", node0)
	}
	for _, want := range []string{`sandbox = "registry.example.internal/pause:3.10"`, `conf_dir = "/etc/cni/net.d-node1"`} {
		if !strings.Contains(node1, want) {
			t.Errorf("node1's containerd config lacks %q:\n%s", want, node1)
		}
	}
}

// The mount-namespace holder's unit names neither the partition's CPUs
// nor its NUMA nodes: a change of those (the e2e's layout step merged
// node0 and node2) restarted the holder, which re-created the namespace
// and every pod of the partition (new sandboxes) without a drain.
func TestMountNamespaceHolderOutlivesACPUChange(t *testing.T) {
	holder := func(plan planner.Plan) string {
		t.Helper()
		b, err := Render(plan)
		if err != nil {
			t.Fatal(err)
		}
		return fileContent(t, b, unitPath(bundle.MountnsUnit("node1")))
	}
	before := seedPlan()
	after := seedPlan()
	after.Host.ReservedCPUs = bitmask.NewCPUSet(0)
	after.Partitions[1].HostReservedCPUs = bitmask.CPUSet{}
	after.Partitions[1].CPUs = bitmask.MustParseCPUList("4-7")
	if a, b := holder(before), holder(after); a != b {
		t.Errorf("node1's holder unit changes with its CPUs:\n%s\n---\n%s", a, b)
	}
}

// The usage view on each cgroup version (slices/nodeview/usage.go): on
// v2 the holder binds the slice's unified files (--unified) and the
// kubelet, whose cgroup library would refuse them through openat2, runs
// with openat2 hidden and checks that first; apply refuses the bundle on
// a v1 host. On v1 none of it, and apply refuses the bundle on v2.
func TestUsageViewByCgroupMode(t *testing.T) {
	for _, c := range []struct {
		mode            cgroupmode.Mode
		hidden          bool
		v1Only, v2Views []string
	}{
		{mode: cgroupmode.V2, hidden: true, v2Views: []string{"node0", "node1"}},
		{mode: cgroupmode.V1, v1Only: []string{"node0", "node1"}},
		{mode: cgroupmode.Hybrid, v1Only: []string{"node0", "node1"}},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			plan := seedPlan()
			plan.Host.CgroupMode = c.mode
			for i := range plan.Partitions {
				for j := range plan.Partitions[i].Memory {
					plan.Partitions[i].Memory[j].PageSizes = []uint64{2 * mi, gi}
				}
			}
			b, err := Render(plan)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(b.CgroupV1Only, c.v1Only) || !slices.Equal(b.UnifiedViews, c.v2Views) || len(b.CgroupV2Only) != 0 {
				t.Errorf("cgroupV1Only %v, unifiedViews %v, cgroupV2Only %v; want %v, %v, none", b.CgroupV1Only, b.UnifiedViews, b.CgroupV2Only, c.v1Only, c.v2Views)
			}
			for _, p := range plan.Partitions {
				kubelet, holder := fileContent(t, b, unitPath(kubeletUnit(p.Name))), fileContent(t, b, unitPath(bundle.MountnsUnit(p.Name)))
				filter := strings.Contains(kubelet, "\nSystemCallFilter=~openat2\nSystemCallErrorNumber=ENOSYS\n")
				_, afterPre, _ := strings.Cut(kubelet, "\nExecStartPre=")
				checkFirst := strings.HasPrefix(afterPre, "/usr/bin/numa-partition view check-openat2\n")
				hold := holderArgs(holder, p.Slice)
				unified := slices.Contains(hold, "--unified")
				if filter != c.hidden || checkFirst != c.hidden || unified != c.hidden {
					t.Errorf("%s on %s: openat2 filter %v, checked first %v, holder --unified %v; want all %v\n%s\n%s",
						p.Name, c.mode, filter, checkFirst, unified, c.hidden, kubelet, holder)
				}
				// The repair reads kubelet's state through openat2: it runs
				// without the filter ("+"), and only there.
				unfiltered := strings.Contains(kubelet, "\nExecStartPre=+/usr/bin/numa-partition kubelet-state repair ")
				if p.Kubelet.CPUManagerPolicy == "static" && unfiltered != c.hidden {
					t.Errorf("%s on %s: kubelet-state repair without the filter %v, want %v\n%s", p.Name, c.mode, unfiltered, c.hidden, kubelet)
				}
				if !slices.Contains(hold, "--meminfo") {
					t.Errorf("%s on %s: the holder serves no meminfo (its kubelet is shown its nodes on every cgroup version)\n%s", p.Name, c.mode, holder)
				}
			}
		})
	}
}

// fileContent is the content of the bundle's file at path (relative to
// the root, as Bundle.Files has it); a file not rendered fails the test.
func fileContent(t *testing.T, b bundle.Bundle, path string) string {
	t.Helper()
	content, ok := renderedFile(b, path)
	if !ok {
		t.Fatalf("%s not rendered", path)
	}
	return content
}

// renderedFile is the content of the bundle's file at path, and whether
// it was rendered: the one lookup of a rendered file by its path for the
// package's tests (fileContent, renderedConfig, seenMachine, ...).
func renderedFile(b bundle.Bundle, path string) (string, bool) {
	for _, f := range b.Files {
		if f.Path == path {
			return string(f.Content), true
		}
	}
	return "", false
}

// holderArgs are the arguments after the slice of the holder unit's
// `view hold --slice <slice>` (holder is the unit's content).
func holderArgs(holder, slice string) []string {
	_, hold, _ := strings.Cut(holder, "\nExecStart=/usr/bin/numa-partition view hold --slice "+slice)
	hold, _, _ = strings.Cut(hold, "\n")
	return strings.Fields(hold)
}

// A layout change that changes only the CPUs a kubelet is shown changes
// its manager settings (apply then restarts it on fresh CPU Manager
// state, which the static policy would refuse otherwise: the e2e's
// 4-node boot merged two nodes and its kubelet never started again).
// Shown the whole machine, its CPUs never change and are not named
// (reservedSystemCPUs, everything outside the partition, follows a
// layout change there).
func TestManagerSettingsFollowTheCPUsShown(t *testing.T) {
	settings := func(plan planner.Plan) string {
		t.Helper()
		b, err := Render(plan)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range b.Units {
			if u.Name == kubeletUnit("node1") && u.KubeletState != nil {
				return u.KubeletState.Settings
			}
		}
		t.Fatal("no kubelet state for node1")
		return ""
	}
	shown := func(whole bool) planner.Plan {
		plan := seedPlan()
		if !whole {
			for i := range plan.Partitions {
				for j := range plan.Partitions[i].Memory {
					plan.Partitions[i].Memory[j].PageSizes = []uint64{2 * mi, gi}
				}
			}
		}
		return plan
	}
	for _, whole := range []bool{false, true} {
		before := shown(whole)
		after := shown(whole)
		after.Partitions[1].CPUs = bitmask.MustParseCPUList("6-7")
		a, b := settings(before), settings(after)
		if whole {
			if strings.Contains(a, "machineCPUs") {
				t.Errorf("shown the whole machine, the settings name its CPUs: %q", a)
			}
			continue
		}
		if a == b || !strings.Contains(a, " machineCPUs=4-7") || !strings.Contains(b, " machineCPUs=4,6-7") {
			t.Errorf("shown its partition: settings %q → %q, want its CPUs named, 4-7 then 4,6-7", a, b)
		}
		if strings.Replace(a, "4-7", "4,6-7", 1) != b {
			t.Errorf("only the CPUs shown changed, so only they differ: %q → %q", a, b)
		}
	}
}
