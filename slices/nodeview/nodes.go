package nodeview

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// The node half: which NUMA nodes a partition's kubelet sees. cAdvisor
// takes the Node's cpu capacity (the CPUs each node directory lists) and
// the Topology, CPU and Memory Managers' nodes from the node directories
// of /sys/devices/system/node, and nothing else. ShowNodes leaves there
// the partition's own alone, in the partition's mount namespace.
//
// It runs at every start of the partition's kubelet (its ExecStartPre=,
// inside the namespace), not in the holder's unit: a layout change then
// restarts the kubelet with its new nodes while the holder, and with it
// the namespace and every pod's mounts, stays.

// NodesDir is where the kernel lists the NUMA nodes, relative to the
// host's root.
const NodesDir = "sys/devices/system/node"

// nodeLists are the files of NodesDir that list nodes: the view keeps
// each one the kernel has, cut to the partition's nodes.
var nodeLists = []string{"online", "possible", "has_cpu", "has_memory", "has_normal_memory", "has_high_memory", "has_generic_initiator"}

// maxNodeList bounds the read of a node list file.
const maxNodeList = 64 << 10

// ShowNodes makes NodesDir below root, in the calling process's mount
// namespace, show nodes alone: a tmpfs in its place, read-only, holding
// each node's directory bound back read-only with every mount below it,
// and the node lists cut to nodes. With
// hostCPUs, the first of the nodes that lists a CPU lists them too
// (hostcpus.go). A view ShowNodes made before (the kubelet's previous
// start) is taken away first, so the nodes may change from one run to
// the next. Nothing is reached through a symbolic link. On a failure the
// namespace may hold a partial view: the kubelet does not start, and the
// next run replaces it.
func ShowNodes(root fsutil.Root, nodes bitmask.NodeSet, hostCPUs bitmask.CPUSet) error {
	if nodes.IsEmpty() {
		return errors.New("no NUMA node to show")
	}
	if err := removeOwnView(root); err != nil {
		return err
	}
	dirs := map[int]*os.File{}
	defer func() {
		for _, f := range dirs {
			f.Close()
		}
	}()
	for _, id := range nodes.IDs() {
		f, err := openDir(root, nodeRel(id))
		if err != nil {
			return fmt.Errorf("NUMA node %d: %w", id, err)
		}
		dirs[id] = f
	}
	var host *hostCPUNode
	if !hostCPUs.IsEmpty() {
		var err error
		if host, err = readHostCPUNode(root, nodes, hostCPUs); err != nil {
			return err
		}
		defer host.close()
	}
	lists := map[string]string{}
	for _, name := range nodeLists {
		b, err := root.ReadFile(path.Join(NodesDir, name), maxNodeList)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		set, err := bitmask.ParseNodeList(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", root.Path(path.Join(NodesDir, name)), err)
		}
		lists[name] = set.Intersect(nodes).String() + "\n"
	}

	top, err := openDir(root, NodesDir)
	if err != nil {
		return err
	}
	defer top.Close()
	if err := unix.Mount("numa-partition-nodes", fdPath(top.Fd()), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mounting a tmpfs over %s: %w", root.Path(NodesDir), err)
	}
	for name, content := range lists {
		if err := root.WriteFile(path.Join(NodesDir, name), []byte(content), 0o444); err != nil {
			return err
		}
	}
	for _, id := range nodes.IDs() {
		var err error
		if host != nil && host.node == id {
			err = host.make(root)
		} else {
			err = bindNode(root, id, dirs[id])
		}
		if err != nil {
			return err
		}
	}
	view, err := openDir(root, NodesDir)
	if err != nil {
		return err
	}
	defer view.Close()
	if err := unix.Mount("", fdPath(view.Fd()), "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("making %s read-only: %w", root.Path(NodesDir), err)
	}
	return nil
}

// bindNode binds node id's own directory, opened before the tmpfs hid
// it, at its place in the tmpfs, with the mounts below it, read-only.
func bindNode(root fsutil.Root, id int, src *os.File) error {
	rel := nodeRel(id)
	if err := root.MkdirAll(rel, 0o755); err != nil {
		return err
	}
	dst, err := openDir(root, rel)
	if err != nil {
		return err
	}
	defer dst.Close()
	if err := bindOver(root, src, dst, rel); err != nil {
		return fmt.Errorf("NUMA node %d's directory: %w", id, err)
	}
	return nil
}

// removeOwnView takes away the tmpfs a previous ShowNodes mounted at
// NodesDir, if any: a tmpfs mounted there (the kernel's is sysfs).
func removeOwnView(root fsutil.Root) error {
	dir, err := openDir(root, NodesDir)
	if err != nil {
		return err
	}
	defer dir.Close()
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(dir.Fd()), &st); err != nil {
		return fmt.Errorf("statfs %s: %w", root.Path(NodesDir), err)
	}
	if st.Type != unix.TMPFS_MAGIC {
		return nil
	}
	if mounted, err := isMountPoint(root, NodesDir, dir); err != nil || !mounted {
		return err
	}
	if err := unix.Unmount(fdPath(dir.Fd()), unix.MNT_DETACH); err != nil {
		return fmt.Errorf("taking away the previous view at %s: %w", root.Path(NodesDir), err)
	}
	return nil
}

// isMountPoint: f, opened at rel (a directory, or a file a bind covers),
// is on another device than its parent directory.
func isMountPoint(root fsutil.Root, rel string, f *os.File) (bool, error) {
	parent, err := openDir(root, path.Dir(rel))
	if err != nil {
		return false, err
	}
	defer parent.Close()
	var a, b unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &a); err != nil {
		return false, fmt.Errorf("stat %s: %w", root.Path(rel), err)
	}
	if err := unix.Fstat(int(parent.Fd()), &b); err != nil {
		return false, fmt.Errorf("stat %s: %w", root.Path(path.Dir(rel)), err)
	}
	return a.Dev != b.Dev, nil
}

func nodeRel(id int) string { return path.Join(NodesDir, "node"+strconv.Itoa(id)) }

// ShownNodes are the NUMA nodes NodesDir lists, ascending: in a
// partition's namespace, those ShowNodes left.
func ShownNodes(root fsutil.Root) ([]int, error) {
	entries, err := root.ReadDir(NodesDir)
	if err != nil {
		return nil, err
	}
	ids, err := numa.IDsNamed(entries, "node", bitmask.MaxNodes)
	if err != nil {
		return nil, fmt.Errorf("%s/%w", root.Path(NodesDir), err)
	}
	return ids, nil
}
