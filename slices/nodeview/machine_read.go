package nodeview

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// Machine is the machine a partition's kubelet is shown, read in its
// mount namespace as cAdvisor reads it: the Node's capacity.
type Machine struct {
	// Nodes are the NUMA nodes /sys/devices/system/node lists there.
	Nodes string `json:"nodes"`
	// CPUs are the CPUs those nodes list (capacity cpu counts them).
	CPUs string `json:"cpus"`
	// MemTotalBytes is MemTotal of its /proc/meminfo (capacity memory).
	MemTotalBytes uint64 `json:"memTotalBytes"`
}

// ReadMachine reads the Machine of the mount namespace process pid (the
// partition's holder) is in, below root: through /proc/<pid>/root, the
// kernel's door into that namespace, which is the one link followed;
// every path inside is resolved within it.
func ReadMachine(root fsutil.Root, pid uint32) (Machine, error) {
	if pid == 0 {
		return Machine{}, fmt.Errorf("no process holds the namespace")
	}
	proc, err := root.OpenDir(path.Join("proc", strconv.FormatUint(uint64(pid), 10)))
	if err != nil {
		return Machine{}, err
	}
	defer proc.Close()
	fd, err := unix.Openat(int(proc.Fd()), "root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Machine{}, fmt.Errorf("the namespace of process %d: %w", pid, err)
	}
	defer unix.Close(fd)
	ns, err := fsutil.OpenRoot(fdPath(uintptr(fd)))
	if err != nil {
		return Machine{}, err
	}
	defer ns.Close()

	ids, err := ShownNodes(ns)
	if err != nil {
		return Machine{}, err
	}
	var m Machine
	var nodes bitmask.NodeSet
	var cpuIDs []int
	for _, id := range ids {
		nodes = nodes.Add(id)
		entries, err := ns.ReadDir(nodeRel(id))
		if err != nil {
			return Machine{}, err
		}
		for _, e := range entries {
			digits, ok := strings.CutPrefix(e.Name(), "cpu")
			if n, err := strconv.Atoi(digits); ok && err == nil && strconv.Itoa(n) == digits {
				cpuIDs = append(cpuIDs, n)
			}
		}
	}
	m.Nodes, m.CPUs = nodes.String(), bitmask.NewCPUSet(cpuIDs...).String()
	b, err := ns.ReadFile(MeminfoTarget, maxMeminfo)
	if err != nil {
		return Machine{}, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return Machine{}, fmt.Errorf("MemTotal %q in the namespace's /proc/meminfo: %w", f[1], err)
			}
			m.MemTotalBytes = kb << 10
			return m, nil
		}
	}
	return Machine{}, fmt.Errorf("the namespace's /proc/meminfo has no MemTotal")
}
