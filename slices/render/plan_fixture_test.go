package render

import (
	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner"
)

const (
	mi = uint64(1) << 20
	gi = uint64(1) << 30
)

// seedPlan is the seed recipe's machine, built by hand: 2 sockets × 4
// cores, CPUs 0-3 on node0 and 4-7 on node1, CPUs 0 and 4 reserved,
// 16 GiB per node with 512 × 2 MiB and 4 × 1 GiB pages each, 1100Mi
// reserved per node (500Mi kube + 500Mi system + 100Mi eviction).
func seedPlan() planner.Plan {
	plan := planner.Plan{
		Hostname: "seed",
		Host: planner.Host{
			ReservedCPUs: bitmask.MustParseCPUList("0,4"),
			CgroupMode:   cgroupmode.V1,
			MemoryNodes:  bitmask.MustParseNodeList("0-1"),
			OnlineCPUs:   bitmask.MustParseCPUList("0-7"),
		},
	}
	colors := []string{"red", "blue"}
	for i := 0; i < 2; i++ {
		name := []string{"node0", "node1"}[i]
		plan.Partitions = append(plan.Partitions, seedPartition(i, name, colors[i],
			bitmask.NewCPUSet(4*i+1, 4*i+2, 4*i+3), bitmask.NewCPUSet(4*i)))
	}
	return plan
}

func seedPartition(i int, name, color string, cpus, reserved bitmask.CPUSet) planner.Partition {
	root := "/var/lib/kubelet-" + name
	return planner.Partition{
		Index: i, Name: name, Slice: name + ".slice", Color: color,
		Nodes: bitmask.NewNodeSet(i), CPUs: cpus, HostReservedCPUs: reserved,
		MemoryNodes: bitmask.NewNodeSet(i),
		Memory: []planner.NodeMemory{{
			Node: i, TotalBytes: 16 * gi, ReservedBytes: 1100 * mi,
			Hugepages: []planner.HugepagePlan{
				{PageSize: 2 * mi, Count: 512},
				{PageSize: 1 * gi, Count: 4},
			},
		}},
		NodeName: "seed-" + name,
		Labels:   map[string]string{"numa-partition.io/partition": name, "numa-type": color},
		Kubelet: planner.Kubelet{
			Binary:                "/usr/bin/kubelet",
			ConfigPath:            "/etc/numa-partition/kubelet-" + name + ".yaml",
			RootDir:               root,
			CertDir:               root + "/pki",
			Kubeconfig:            "/etc/kubernetes/kubelet-" + name + ".conf",
			BootstrapKubeconfig:   "/etc/kubernetes/bootstrap-kubelet-" + name + ".conf",
			CgroupRoot:            "/" + name,
			DevicePluginsDir:      root + "/device-plugins",
			PodLogsDir:            "/var/log/pods-" + name,
			Port:                  10250 + 10*i,
			HealthzPort:           10248 + 10*i,
			MaxPods:               110,
			CPUManagerPolicy:      "static",
			MemoryManagerPolicy:   "Static",
			TopologyManagerPolicy: "single-numa-node",
			TopologyManagerScope:  "pod",
			CPUManagerPolicyOptions: map[string]string{
				"full-pcpus-only": "true", "strict-cpu-reservation": "true",
			},
			KubeReservedMemory:   500 * mi,
			SystemReservedMemory: 500 * mi,
			EvictionHardMemory:   100 * mi,
		},
		Runtime: planner.Runtime{
			Kind:       planner.RuntimeContainerd,
			Endpoint:   "unix:///run/containerd-" + name + "/containerd.sock",
			Binary:     "/usr/bin/containerd",
			ConfigPath: "/etc/numa-partition/containerd-" + name + ".toml",
			RootDir:    "/var/lib/containerd-" + name,
			StateDir:   "/run/containerd-" + name,
			CNIConfDir: "/etc/cni/net.d",
			CNIBinDir:  "/opt/cni/bin",
		},
		Allocator: planner.Allocator{
			Socket:   "/run/numa-partition/" + name + ".sock",
			StateDir: "/var/lib/numa-partition/" + name,
		},
	}
}
