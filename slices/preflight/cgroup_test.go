package preflight

import (
	"testing"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

func TestCgroupDriverCheck(t *testing.T) {
	const runc = "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]\n  SystemdCgroup = %s\n"
	c := CgroupDriverCheck{Part: "node0", KubeletDriver: "systemd", ConfigPath: "/etc/k.yaml",
		ContainerdConfig: []byte("version = 3\n" + sprintf(runc, "true")), ContainerdConfigPath: "/etc/c.toml"}
	wantPass(t, c)
	c.ContainerdConfig = []byte(sprintf(runc, "false"))
	wantError(t, c, "partition node0", "cgroupDriver is systemd", "runc uses cgroupfs", "/etc/c.toml")
	c.KubeletDriver = ""
	wantPass(t, c) // both cgroupfs
	c.ContainerdConfig = []byte("[plugins\n")
	wantError(t, c, "not TOML")
}

func TestCgroupModeCheck(t *testing.T) {
	b := &bundle.Bundle{CgroupV2Only: []string{"node1"}}
	wantPass(t, CgroupModeCheck{Bundle: b, Mode: cgroupmode.V2})
	wantError(t, CgroupModeCheck{Bundle: b, Mode: cgroupmode.V1}, "partition node1", "needs cgroup v2")
	// Listed once, and not ignorable, not even by all.
	rep := Run([]Check{CgroupModeCheck{Bundle: b, Mode: cgroupmode.Hybrid}}, Ignore{all: true})
	if len(rep.Results) != 1 || rep.Results[0].Status != StatusError || rep.Err() == nil {
		t.Errorf("ignored by all: %+v", rep.Results)
	}
	if _, err := ParseIgnore([]string{"cgroupmode"}); err == nil {
		t.Error("--ignore-preflight-errors CgroupMode taken")
	}
}
