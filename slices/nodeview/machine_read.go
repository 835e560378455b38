package nodeview

import (
	"fmt"
	"path"
	"strconv"

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

// OpenNamespace opens, below root, the root of the mount namespace
// process pid (the partition's holder) is in: through /proc/<pid>/root,
// the kernel's door into that namespace, which is the one link followed;
// every path inside is resolved within it.
func OpenNamespace(root fsutil.Root, pid uint32) (fsutil.Root, error) {
	if pid == 0 {
		return fsutil.Root{}, fmt.Errorf("no process holds the namespace")
	}
	proc, err := root.OpenDir(path.Join("proc", strconv.FormatUint(uint64(pid), 10)))
	if err != nil {
		return fsutil.Root{}, err
	}
	defer proc.Close()
	fd, err := unix.Openat(int(proc.Fd()), "root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fsutil.Root{}, fmt.Errorf("the namespace of process %d: %w", pid, err)
	}
	defer unix.Close(fd)
	return fsutil.OpenRoot(fdPath(uintptr(fd)))
}

// ReadMachine reads the Machine of the mount namespace process pid is in
// (OpenNamespace).
func ReadMachine(root fsutil.Root, pid uint32) (Machine, error) {
	ns, err := OpenNamespace(root, pid)
	if err != nil {
		return Machine{}, err
	}
	defer ns.Close()

	ids, err := ShownNodes(ns)
	if err != nil {
		return Machine{}, err
	}
	var nodes bitmask.NodeSet
	var cpus bitmask.CPUSet
	for _, id := range ids {
		nodes = nodes.Add(id)
		set, err := nodeCPUs(ns, id)
		if err != nil {
			return Machine{}, err
		}
		cpus = cpus.Union(set)
	}
	b, err := ns.ReadFile(MeminfoTarget, maxMeminfo)
	if err != nil {
		return Machine{}, err
	}
	lines, err := parseHostMeminfo(b)
	if err != nil {
		return Machine{}, fmt.Errorf("the namespace's: %w", err)
	}
	return Machine{Nodes: nodes.String(), CPUs: cpus.String(), MemTotalBytes: valuesOf(lines)["MemTotal"]}, nil
}
