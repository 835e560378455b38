package hostpaths

import "testing"

// The paths are the kernel's and the ones the docs, the packaging and
// existing hosts have: a change here moves files on every host.
func TestPaths(t *testing.T) {
	for got, want := range map[string]string{
		NodePoolRel(3, 2<<20):            "devices/system/node/node3/hugepages/hugepages-2048kB/nr_hugepages",
		NodePoolRel(0, 1<<30):            "devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages",
		GlobalPoolRel(2 << 20):           "kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
		HugepageViewRel("node1"):         "etc/numa-partition/sysfs-node1",
		AllocatorSocket("node0"):         "/run/numa-partition/node0.sock",
		AllocatorStateDir("node0"):       "/var/lib/numa-partition/node0",
		NRISocket("/run/containerd-red"): "/run/containerd-red/nri.sock",
		Abs(RecordRel):                   "/var/lib/numa-partition/applied.json",
		Abs(PlanRel):                     "/etc/numa-partition/plan.json",
		Abs(LockRel):                     "/run/numa-partition/apply.lock",
		Abs(OriginalsRel):                "/var/lib/numa-partition/originals",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}
