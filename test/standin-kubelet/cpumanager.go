package main

import (
	"fmt"
	"os"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// podCPUs is the cpuset kubelet's CPU Manager gives a pod that has no
// exclusive CPUs (the stand-in's pod is best-effort): with the static
// policy and strict-cpu-reservation, the shared pool is every online CPU
// of the machine (cadvisor sees them all) minus reservedSystemCPUs;
// without the option the reserved CPUs stay in the pool; with the none
// policy kubelet sets no cpuset and the pod inherits its slice's (ok false).
func podCPUs(cfg *kubeletv1beta1.KubeletConfiguration, online bitmask.CPUSet) (bitmask.CPUSet, bool, error) {
	if cfg.CPUManagerPolicy != "static" {
		return bitmask.CPUSet{}, false, nil
	}
	if cfg.CPUManagerPolicyOptions["strict-cpu-reservation"] != "true" {
		return online, true, nil
	}
	reserved, err := bitmask.ParseCPUList(cfg.ReservedSystemCPUs)
	if err != nil {
		return bitmask.CPUSet{}, false, fmt.Errorf("reservedSystemCPUs %q: %w", cfg.ReservedSystemCPUs, err)
	}
	pool := online.Difference(reserved)
	if pool.IsEmpty() {
		return pool, false, fmt.Errorf("reservedSystemCPUs %s leaves no CPU of the online %s for pods", reserved, online)
	}
	return pool, true, nil
}

// onlineCPUs reads the machine's online CPUs the way cadvisor does.
func onlineCPUs(sysfs string) (bitmask.CPUSet, error) {
	path := sysfs + "/devices/system/cpu/online"
	data, err := os.ReadFile(path)
	if err != nil {
		return bitmask.CPUSet{}, fmt.Errorf("reading online CPUs: %w", err)
	}
	set, err := bitmask.ParseCPUList(bitmask.Trim(string(data)))
	if err != nil {
		return bitmask.CPUSet{}, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// cpuMask is systemd's D-Bus form of a CPU set (AllowedCPUs, "ay"): bit i
// of byte i/8 is CPU i.
func cpuMask(set bitmask.CPUSet) []byte {
	ids := set.IDs()
	if len(ids) == 0 {
		return nil
	}
	mask := make([]byte, ids[len(ids)-1]/8+1)
	for _, id := range ids {
		mask[id/8] |= 1 << (id % 8)
	}
	return mask
}
