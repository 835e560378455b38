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
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// The host's CPUs, shown on a partition's node. kubelet's static CPU
// Manager refuses to start without a reserved CPU among those it counts,
// and a partition whose nodes hold none of the host's CPUs has none to
// reserve but its own pods' (kubeletgen.Machine.ShownHostCPUs). Its first node
// with a CPU then lists the host's CPUs too, as links to their
// /sys/devices/system/cpu directories like its own: cAdvisor counts them
// (capacity cpu is the partition's CPUs and the host's, allocatable the
// partition's) and the kubelet reserves them (reservedSystemCPUs, kept off
// every pod by strict-cpu-reservation). Every other entry of that node's
// directory is the kernel's, bound back (files, directories with the
// mounts below them) or made again (links); its cpulist and cpumap list
// the host's CPUs too, so that whoever reads them agrees with the links.

// hostCPUNode is the node directory that lists the host's CPUs, read
// before the view's tmpfs hides the kernel's.
type hostCPUNode struct {
	node    int
	entries []nodeEntry
}

// nodeEntry is one entry of a node directory.
type nodeEntry struct {
	name string
	// target is a link's text (made again in the view).
	target string
	// file is an O_PATH descriptor of a file or directory (bound back);
	// nil for a link.
	file *os.File
	// content replaces the file's (cpulist, cpumap); nil to bind.
	content []byte
}

// maxNodeEntries bounds the entries read from one node directory: its
// CPUs and memory blocks (a 12 TiB node of 128 MiB blocks has 98,304).
const maxNodeEntries = 1 << 18

// readHostCPUNode reads the directory of the first of nodes that links a
// CPU (else the first node), with hostCPUs added to its CPU lists.
func readHostCPUNode(root fsutil.Root, nodes bitmask.NodeSet, hostCPUs bitmask.CPUSet) (*hostCPUNode, error) {
	h := &hostCPUNode{node: nodes.Min()}
	for _, id := range nodes.IDs() {
		own, err := nodeCPUs(root, id)
		if err != nil {
			return nil, err
		}
		if !own.IsEmpty() {
			h.node = id
			break
		}
	}
	rel := nodeRel(h.node)
	entries, err := root.ReadDir(rel)
	if err != nil {
		return nil, err
	}
	if len(entries) > maxNodeEntries {
		return nil, fmt.Errorf("%s has %d entries, more than the %d read", root.Path(rel), len(entries), maxNodeEntries)
	}
	ok := false
	defer func() {
		if !ok {
			h.close()
		}
	}()
	for _, e := range entries {
		if hostCPUs.Has(cpuOfEntry(e.Name())) {
			return nil, fmt.Errorf("%s already lists CPU %s, a host CPU to show there", root.Path(rel), strings.TrimPrefix(e.Name(), "cpu"))
		}
		entry, err := readNodeEntry(root, rel, e, hostCPUs)
		if err != nil {
			return nil, err
		}
		h.entries = append(h.entries, entry)
	}
	for _, cpu := range hostCPUs.IDs() {
		name := "cpu" + strconv.Itoa(cpu)
		h.entries = append(h.entries, nodeEntry{name: name, target: "../../cpu/" + name})
	}
	ok = true
	return h, nil
}

// cpuOfEntry is the CPU a node directory's entry named "cpuN" links, or
// -1 (cpulist, cpumap and others are not CPUs).
func cpuOfEntry(name string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "cpu"))
	if !strings.HasPrefix(name, "cpu") || err != nil || n < 0 {
		return -1
	}
	return n
}

// nodeCPUs are the CPUs node id's cpulist names (none when it has no
// cpulist). ReadMachine counts these as the CPUs a kubelet is shown.
func nodeCPUs(root fsutil.Root, id int) (bitmask.CPUSet, error) {
	rel := path.Join(nodeRel(id), "cpulist")
	b, err := root.ReadFile(rel, maxNodeList)
	if errors.Is(err, fs.ErrNotExist) {
		return bitmask.CPUSet{}, nil
	}
	if err != nil {
		return bitmask.CPUSet{}, err
	}
	set, err := bitmask.ParseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return bitmask.CPUSet{}, fmt.Errorf("%s: %w", root.Path(rel), err)
	}
	return set, nil
}

// readNodeEntry reads entry e of the node directory rel: a link's text, a
// descriptor of anything else, and for cpulist and cpumap their content
// with hostCPUs added.
func readNodeEntry(root fsutil.Root, rel string, e fs.DirEntry, hostCPUs bitmask.CPUSet) (nodeEntry, error) {
	name := path.Join(rel, e.Name())
	out := nodeEntry{name: e.Name()}
	var err error
	switch e.Type() {
	case fs.ModeSymlink:
		out.target, err = root.Readlink(name)
		return out, err
	case fs.ModeDir:
		out.file, err = openDir(root, name)
		return out, err
	case 0:
	default:
		return out, fmt.Errorf("%s is a %s: a node directory holds files, directories and links", root.Path(name), fsutil.DescribeMode(e.Type()))
	}
	switch e.Name() {
	case "cpulist", "cpumap":
		b, err := root.ReadFile(name, maxNodeList)
		if err != nil {
			return out, err
		}
		if out.content, err = withCPUs(e.Name(), strings.TrimSpace(string(b)), hostCPUs); err != nil {
			return out, fmt.Errorf("%s: %w", root.Path(name), err)
		}
		return out, nil
	}
	out.file, err = openEnd(root, name)
	return out, err
}

// withCPUs is a node's cpulist or cpumap (text, in the kernel's form)
// listing cpus too; a mask keeps the kernel's width.
func withCPUs(file, text string, cpus bitmask.CPUSet) ([]byte, error) {
	if file == "cpulist" {
		own, err := bitmask.ParseCPUList(text)
		if err != nil {
			return nil, err
		}
		return []byte(own.Union(cpus).String() + "\n"), nil
	}
	own, err := bitmask.ParseCPUMask(text)
	if err != nil {
		return nil, err
	}
	mask := own.Union(cpus).Mask()
	for strings.Count(mask, ",") < strings.Count(text, ",") {
		mask = "00000000," + mask
	}
	return []byte(mask + "\n"), nil
}

// make makes the node's directory in the view: its links made again, the
// host's CPUs among them, its CPU lists written, everything else bound
// back read-only.
func (h *hostCPUNode) make(root fsutil.Root) error {
	rel := nodeRel(h.node)
	if err := root.MkdirAll(rel, 0o755); err != nil {
		return err
	}
	dir, err := openDir(root, rel)
	if err != nil {
		return err
	}
	defer dir.Close()
	for _, e := range h.entries {
		if err := h.makeEntry(root, dir, rel, e); err != nil {
			return fmt.Errorf("NUMA node %d's %s: %w", h.node, e.name, err)
		}
	}
	return nil
}

func (h *hostCPUNode) makeEntry(root fsutil.Root, dir *os.File, rel string, e nodeEntry) error {
	name := path.Join(rel, e.name)
	switch {
	case e.file == nil && e.content == nil:
		return unix.Symlinkat(e.target, int(dir.Fd()), e.name)
	case e.content != nil:
		return root.WriteFile(name, e.content, 0o444)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(e.file.Fd()), &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := root.MkdirAll(name, 0o755); err != nil {
			return err
		}
	} else if err := root.WriteFile(name, nil, 0o444); err != nil {
		return err
	}
	dst, err := openOf(root, name, st.Mode&unix.S_IFMT)
	if err != nil {
		return err
	}
	defer dst.Close()
	return bindOver(root, e.file, dst, name)
}

func (h *hostCPUNode) close() {
	for _, e := range h.entries {
		if e.file != nil {
			e.file.Close()
		}
	}
}
