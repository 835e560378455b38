package preflight

import (
	"fmt"

	"github.com/BurntSushi/toml"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// CgroupModeCheck is the bundle's cgroup-mode constraints against the
// host's mode (CheckCgroupMode): the one rule apply refuses a bundle
// by (slices/apply/transaction.NewDesired), listed here so that the preflight names
// it with the rest. It cannot be ignored.
type CgroupModeCheck struct {
	Bundle *bundle.Bundle
	Mode   cgroupmode.Mode
}

// Name is CgroupMode.
func (CgroupModeCheck) Name() string { return NameCgroupMode }

// Partition is "": the mode is the host's.
func (CgroupModeCheck) Partition() string { return "" }

// Check applies CheckCgroupMode.
func (c CgroupModeCheck) Check() (warnings, errs []error) {
	return nil, errorsOf(CheckCgroupMode(*c.Bundle, c.Mode))
}

// CheckCgroupMode is why bundle b cannot run on a host of cgroup mode
// mode, nil when it can: partitions rendered for another mode than the
// host's (a plan made with another host's facts).
func CheckCgroupMode(b bundle.Bundle, mode cgroupmode.Mode) error {
	if err := cgroupV1Only(b.CgroupV1Only, mode); err != nil {
		return err
	}
	if err := cgroupV2Only(b.CgroupV2Only, mode); err != nil {
		return err
	}
	return unifiedViews(b.UnifiedViews, mode)
}

// cgroupV1Only refuses, on cgroup v2, a kubelet shown its partition
// as the machine by a bundle rendered for a v1 host (a plan made with
// another host's facts): its usage view binds and serves v1 files, and
// its unit does not hide openat2, so on v2 it would read the host's
// usage against its partition's MemTotal.
func cgroupV1Only(partitions []string, mode cgroupmode.Mode) error {
	if mode != cgroupmode.V2 || len(partitions) == 0 {
		return nil
	}
	return fmt.Errorf("partition %s: its kubelet was rendered for a cgroup v1 host (its usage view), and this host is %s: the plan was made with another host's facts (cgroupMode); plan again on this host, or with --host-facts naming cgroupMode %q",
		partitions[0], mode, cgroupmode.V2)
}

// unifiedViews refuses, on cgroup v1, a kubelet rendered to read its
// slice's cgroup v2 usage files with openat2 hidden (a plan made with a
// v2 host's facts): on v1 it would refuse the holder's served memory
// files and report a memory usage of 0.
func unifiedViews(partitions []string, mode cgroupmode.Mode) error {
	if mode == cgroupmode.V2 || len(partitions) == 0 {
		return nil
	}
	return fmt.Errorf("partition %s: its kubelet was rendered for a cgroup v2 host (it reads its slice's usage with openat2 hidden), and this host is %s: the plan was made with another host's facts (cgroupMode); plan again on this host, or with --host-facts naming this host's cgroupMode",
		partitions[0], mode)
}

// cgroupV2Only refuses nri mode on cgroup v1: kubelet 1.37 with
// cpuManagerPolicy none writes every CPU of the machine into its pods'
// cpuset, which cgroup v1 refuses below a partition's narrower cpuset
// (kubelet then fails "Failed to start ContainerManager ... permission
// denied"); cgroup v2 takes the write and keeps the effective set.
func cgroupV2Only(partitions []string, mode cgroupmode.Mode) error {
	if mode == cgroupmode.V2 || len(partitions) == 0 {
		return nil
	}
	return fmt.Errorf("partition %s: allocator mode %q needs cgroup v2, and this host is %s: kubelet with cpuManagerPolicy none writes every CPU into its pods' cpuset, which cgroup v1 refuses below the partition's; use allocator_mode = %q here, or boot with systemd.unified_cgroup_hierarchy=1",
		partitions[0], config.AllocatorModeNRI, mode, config.AllocatorModeKubelet)
}

// CgroupDriverCheck is the cgroup driver of the partition's kubelet
// against its containerd's (both rendered: the KubeletConfiguration's
// cgroupDriver, runc's SystemdCgroup in the containerd config). Two
// drivers for one slice tree make kubelet fail its pods' sandboxes
// ("cgroup driver mismatch"): an error.
type CgroupDriverCheck struct {
	Part                 string
	KubeletDriver        string // "systemd" or "cgroupfs" ("" is kubelet's default, cgroupfs)
	ConfigPath           string // the KubeletConfiguration
	ContainerdConfig     []byte // the rendered containerd config
	ContainerdConfigPath string
}

// Name is CgroupDriver.
func (CgroupDriverCheck) Name() string { return NameCgroupDriver }

// Partition is the partition whose kubelet and containerd are compared.
func (c CgroupDriverCheck) Partition() string { return c.Part }

// Check compares the two drivers.
func (c CgroupDriverCheck) Check() (warnings, errs []error) {
	runc, err := runcSystemdCgroup(c.ContainerdConfig)
	if err != nil {
		return nil, []error{fmt.Errorf("partition %s: the rendered containerd config %s: %w", c.Part, c.ContainerdConfigPath, err)}
	}
	kubelet := c.KubeletDriver
	if kubelet == "" {
		kubelet = "cgroupfs"
	}
	containerd := "cgroupfs"
	if runc {
		containerd = "systemd"
	}
	if kubelet != containerd {
		return nil, []error{fmt.Errorf("partition %s: its kubelet's cgroupDriver is %s (%s) and its containerd's runc uses %s (SystemdCgroup in %s): render both again with this numa-partition (the plan or the bundle was edited by hand)",
			c.Part, kubelet, c.ConfigPath, containerd, c.ContainerdConfigPath)}
	}
	return nil, nil
}

// runcSystemdCgroup is runc's SystemdCgroup in a containerd 2 config.
func runcSystemdCgroup(b []byte) (bool, error) {
	var cfg struct {
		Plugins map[string]struct {
			Containerd struct {
				Runtimes map[string]struct {
					Options struct {
						SystemdCgroup bool `toml:"SystemdCgroup"`
					} `toml:"options"`
				} `toml:"runtimes"`
			} `toml:"containerd"`
		} `toml:"plugins"`
	}
	if _, err := toml.Decode(string(b), &cfg); err != nil {
		return false, fmt.Errorf("not TOML: %w", err)
	}
	return cfg.Plugins["io.containerd.cri.v1.runtime"].Containerd.Runtimes["runc"].Options.SystemdCgroup, nil
}
