package apply

import (
	"reflect"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// TestPartitionChanges: a partition's slice (its CPUs when set live),
// its kubelet's configuration, its other units' files, its kubelet's
// state, the units started, restarted (a kubelet stopped and started
// again too), stopped, each once; a host-wide
// unit's steps are no partition's; a partition that goes has its record's
// units.
func TestPartitionChanges(t *testing.T) {
	units := []bundle.Unit{
		{Name: "node0.slice", Phase: bundle.PhaseSlice, Partition: "node0", Files: []string{"etc/systemd/system/node0.slice"}},
		{Name: "containerd-node0.service", Phase: bundle.PhaseRuntime, Partition: "node0", Files: []string{"etc/systemd/system/containerd-node0.service", "etc/containerd-node0/config.toml"}},
		{Name: "kubelet-node0.service", Phase: bundle.PhaseKubelet, Partition: "node0", KubeletState: &bundle.KubeletState{Dir: "var/lib/kubelet-node0"},
			Files: []string{"etc/systemd/system/kubelet-node0.service", "var/lib/kubelet-node0/config.yaml"}},
		{Name: "numa-allocator@node0.service", Phase: bundle.PhaseAllocator, Partition: "node0", Files: []string{"etc/systemd/system/numa-allocator@.service"}},
		{Name: "numa-allocator@node1.service", Phase: bundle.PhaseAllocator, Partition: "node1", Files: []string{"etc/systemd/system/numa-allocator@.service"}},
		{Name: "system.slice", Phase: bundle.PhaseSlice, Files: []string{"etc/systemd/system/system.slice.d/50-numa-partition.conf"}},
		// The record's: node2 goes.
		{Name: "kubelet-node2.service", Phase: bundle.PhaseKubelet, Partition: "node2", KubeletState: &bundle.KubeletState{Dir: "var/lib/kubelet-node2"}},
	}
	cpus := bitmask.MustParseCPUList("2-7")
	steps := []transaction.Step{
		{Action: transaction.StopUnit{Unit: "kubelet-node2.service"}},
		{Action: transaction.StopUnit{Unit: "kubelet-node0.service"}},
		{Action: transaction.WriteFile{Path: "var/lib/kubelet-node0/config.yaml"}},
		{Action: transaction.WriteFile{Path: "etc/systemd/system/kubelet-node0.service"}},
		{Action: transaction.WriteFile{Path: "etc/systemd/system/node0.slice"}},
		{Action: transaction.WriteFile{Path: "etc/containerd-node0/config.toml"}},
		{Action: transaction.WriteFile{Path: "etc/systemd/system/numa-allocator@.service"}},
		{Action: transaction.WriteFile{Path: "etc/systemd/system/system.slice.d/50-numa-partition.conf"}},
		{Action: transaction.DaemonReload{}},
		{Action: transaction.SetSliceCPUs{Unit: "node0.slice", CPUs: cpus, Mems: bitmask.NewNodeSet(0)}},
		{Action: transaction.SetSliceCPUs{Unit: "system.slice", CPUs: cpus}},
		{Action: transaction.PrepareKubeletState{Unit: "kubelet-node0.service"}},
		{Action: transaction.RestartUnit{Unit: "containerd-node0.service"}},
		{Action: transaction.StartUnit{Unit: "kubelet-node0.service"}},
		{Action: transaction.StartUnit{Unit: "numa-allocator@node0.service"}},
		{Action: transaction.RestartUnit{Unit: "numa-allocator@node1.service"}},
		{Action: transaction.WriteRecord{}},
	}
	got := partitionChanges(units, steps)
	want := map[string][]string{
		"node0": {"slice node0.slice (CPUs 2-7, memory nodes 0)", "kubelet config", "files of containerd-node0.service, numa-allocator@node0.service",
			"manager state of kubelet-node0.service moved aside", "start numa-allocator@node0.service",
			"restart containerd-node0.service, kubelet-node0.service"},
		"node1": {"files of numa-allocator@node1.service", "restart numa-allocator@node1.service"},
		"node2": {"stop kubelet-node2.service"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes:\n%q\nwant:\n%q", got, want)
	}
}
