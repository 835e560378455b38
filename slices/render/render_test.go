package render

import (
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// TestRenderRefusesBadPlans: each bad value is named in the error.
func TestRenderRefusesBadPlans(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*planner.Plan)
		want string
	}{
		{"no partitions", func(p *planner.Plan) { p.Partitions = nil }, "no partitions"},
		{"dash in name", func(p *planner.Plan) { p.Partitions[0].Name = "node-0"; p.Partitions[0].Slice = "node-0.slice" }, `partition name "node-0"`},
		{"underscore in name", func(p *planner.Plan) { p.Partitions[0].Name = "node_0" }, `partition name "node_0"`},
		{"same name twice", func(p *planner.Plan) { p.Partitions[1].Name = "node0"; p.Partitions[1].Slice = "node0.slice" }, "used twice"},
		{"slice not name.slice", func(p *planner.Plan) { p.Partitions[0].Slice = "other.slice" }, `slice "other.slice" must be "node0.slice"`},
		{"no host CPUs", func(p *planner.Plan) { p.Host.ReservedCPUs = bitmask.CPUSet{} }, "host.reservedCPUs is empty"},
		{"relative config path", func(p *planner.Plan) { p.Partitions[0].Kubelet.ConfigPath = "kubelet.yaml" }, `kubelet.configPath "kubelet.yaml"`},
		{"space in a label", func(p *planner.Plan) { p.Partitions[0].Labels["x"] = "a b" }, `kubelet argument "--node-labels=`},
		{"specifier in extra args", func(p *planner.Plan) { p.Partitions[1].Kubelet.ExtraArgs = []string{"--v=%i"} }, `"--v=%i"`},
		{"tcp runtime endpoint", func(p *planner.Plan) { p.Partitions[0].Runtime.Endpoint = "tcp://1.2.3.4:1" }, "runtime.endpoint"},
		{"device plugins at the shared path", func(p *planner.Plan) {
			p.Partitions[0].Kubelet.DevicePluginsDir = "/var/lib/kubelet/device-plugins"
		}, "shared path itself"},
		{"socket outside /run", func(p *planner.Plan) { p.Partitions[0].Allocator.Socket = "/tmp/a.sock" }, "must lie under /run/"},
		{"quote in the sandbox image", func(p *planner.Plan) { p.Partitions[0].Runtime.SandboxImage = `pause"` + "\n[x]" }, "runtime.sandboxImage"},
		{"relative CNI dir", func(p *planner.Plan) { p.Partitions[1].Runtime.CNIConfDir = "net.d" }, `runtime.cniConfDir "net.d"`},
		{"unknown runtime kind", func(p *planner.Plan) { p.Partitions[0].Runtime.Kind = "crio" }, `runtime kind "crio"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := seedPlan()
			c.edit(&plan)
			_, err := Render(plan)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

func TestRenderDaemonCPUsFallback(t *testing.T) {
	plan := seedPlan()
	// Host CPUs only on node0: node1's daemons share its pods' CPUs.
	plan.Host.ReservedCPUs = bitmask.NewCPUSet(0)
	plan.Partitions[1].HostReservedCPUs = bitmask.CPUSet{}
	plan.Partitions[1].CPUs = bitmask.MustParseCPUList("4-7")
	b, err := Render(plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "partition node1 has no host-reserved CPU") {
		t.Fatalf("warnings %v", b.Warnings)
	}
	for _, f := range b.Files {
		if f.Path == unitPath(kubeletUnit("node1")) && !strings.Contains(string(f.Content), "\nCPUAffinity=4-7\n") {
			t.Errorf("kubelet-node1 not on its partition's CPUs:\n%s", f.Content)
		}
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
	if kubelet.Name != "kubelet-node1.service" || kubelet.Phase != PhaseKubelet || !kubelet.Enable || !kubelet.Start ||
		strings.Join(kubelet.Files, " ") != "etc/numa-partition/kubelet-node1.yaml etc/systemd/system/kubelet-node1.service" {
		t.Errorf("last unit %+v", kubelet)
	}
}

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
	cfg := func(name string) string {
		for _, f := range b.Files {
			if f.Path == "etc/numa-partition/containerd-"+name+".toml" {
				return string(f.Content)
			}
		}
		t.Fatalf("no containerd config for %s", name)
		return ""
	}
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
