package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/bundle"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// unitSetting is the last value of key in section of a unit's files, in
// the order systemd reads them (the unit file, then its drop-ins by name),
// read with go-systemd's parser.
func unitSetting(t *testing.T, b bundle.Bundle, u bundle.Unit, section, key string) (string, bool) {
	t.Helper()
	content := map[string][]byte{}
	for _, f := range b.Files {
		content[f.Path] = f.Content
	}
	var val string
	found := false
	for _, p := range u.Files { // sorted: the unit file sorts before its .d/ drop-ins
		opts, err := unit.DeserializeOptions(bytes.NewReader(content[p]))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, o := range opts {
			if o.Section == section && o.Name == key {
				val, found = o.Value, true
			}
		}
	}
	return val, found
}

// The typed data apply takes is what the text says: every slice's and
// scope's Cpuset is its files' AllowedCPUs=/AllowedMemoryNodes=, every
// other unit has none; the pools are the oneshot's; the ports the plan's.
func TestTypedBundleMatchesItsText(t *testing.T) {
	for _, e := range examples {
		t.Run(e.name, func(t *testing.T) {
			plan, _, b := e.render(t)
			cpusets := 0
			for _, u := range b.Units {
				section := map[bool]string{true: "Slice", false: "Scope"}[strings.HasSuffix(u.Name, ".slice")]
				cpus, okC := unitSetting(t, b, u, section, "AllowedCPUs")
				mems, okM := unitSetting(t, b, u, section, "AllowedMemoryNodes")
				if u.Cpuset == nil {
					if (strings.HasSuffix(u.Name, ".slice") || strings.HasSuffix(u.Name, ".scope")) && (okC || okM) {
						t.Errorf("%s sets AllowedCPUs=%s AllowedMemoryNodes=%s but has no Cpuset", u.Name, cpus, mems)
					}
					continue
				}
				cpusets++
				if !okC {
					t.Errorf("%s has a Cpuset but its files set no AllowedCPUs=", u.Name)
					continue
				}
				// The host's units leave memory unlocked: no
				// AllowedMemoryNodes=, an empty node set.
				if c, m := bitmask.MustParseCPUList(cpus), bitmask.MustParseNodeList(mems); !c.Equal(u.Cpuset.CPUs) || c.String() != u.Cpuset.CPUs.String() || m != u.Cpuset.Mems {
					t.Errorf("%s: files say %s/%s, Cpuset %s/%s", u.Name, cpus, mems, u.Cpuset.CPUs, u.Cpuset.Mems)
				}
			}
			if want := len(hostUnits) + len(plan.Partitions); cpusets != want {
				t.Errorf("%d units with a Cpuset, want %d (host units and partition slices)", cpusets, want)
			}
			specs := HugepageSpecs(&plan)
			if len(b.Hugepages) != len(specs) {
				t.Errorf("%d pools, the oneshot sets %d", len(b.Hugepages), len(specs))
			}
			for _, h := range b.Hugepages {
				spec := h.String()
				if !strings.Contains(strings.Join(specs, " "), spec) {
					t.Errorf("pool %s is not the oneshot's (%v)", spec, specs)
				}
			}
			for _, p := range plan.Partitions {
				found := false
				if p.Network != nil {
					// In its own namespace: the host's ports are not its.
					for _, port := range b.Ports {
						if port.Unit == kubeletUnit(p.Name) {
							t.Errorf("partition %s has a namespace of its own, but its port %d is checked on the host", p.Name, port.Port)
						}
					}
					continue
				}
				for _, port := range b.Ports {
					found = found || (port.Port == p.Kubelet.HealthzPort && port.Unit == kubeletUnit(p.Name))
				}
				if !found {
					t.Errorf("partition %s: no port %d of %s in %+v", p.Name, p.Kubelet.HealthzPort, kubeletUnit(p.Name), b.Ports)
				}
			}
		})
	}
}

func TestTypedBundleNRIPartition(t *testing.T) {
	p := seedPlan()
	p.Partitions[1].Allocator.Mode = config.AllocatorModeNRI
	b, err := Render(p)
	if err != nil || len(b.CgroupV2Only) != 1 || b.CgroupV2Only[0] != "node1" {
		t.Errorf("nri partition: CgroupV2Only %v, err %v", b.CgroupV2Only, err)
	}
}
