package numa

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
)

const nodeDir = "devices/system/node"

// rawNode is one nodeN directory as read, before CPUs are reconciled
// across nodes.
type rawNode struct {
	id        int
	cpus      bitmask.CPUSet // as the node lists them, offline CPUs included
	meminfo   NodeMeminfo    // nil when the file is missing
	hugepages []Hugepages
	distances []int // as read; ordered by the kernel's online nodes
	distText  string
}

// readNodes reads every nodeN directory, ascending by id. ok is false when
// the kernel has no node directory (CONFIG_NUMA=n) or it has no nodes.
func (f FS) readNodes(w *warnings) ([]rawNode, bool, error) {
	ids, ok, err := f.idDirs(f.path(nodeDir), "node", bitmask.MaxNodes)
	if err != nil || !ok || len(ids) == 0 {
		return nil, false, err
	}
	nodes := make([]rawNode, 0, len(ids))
	for _, id := range ids {
		n, err := f.readNode(id, w)
		if err != nil {
			return nil, false, err
		}
		nodes = append(nodes, n)
	}
	return nodes, true, nil
}

func (f FS) readNode(id int, w *warnings) (rawNode, error) {
	dir := f.path(nodeDir, "node"+strconv.Itoa(id))
	n := rawNode{id: id, hugepages: []Hugepages{}}

	cpus, ok, mismatch, err := f.readCPUs(dir+"/cpulist", dir+"/cpumap")
	if err != nil {
		return n, err
	}
	if mismatch != "" {
		w.add("%s (the dump was edited)", mismatch)
	}
	if !ok {
		w.add("node%d: neither cpulist nor cpumap exists: the node has no CPUs", id)
	}
	n.cpus = cpus

	path := dir + "/meminfo"
	s, ok, err := f.read(path)
	if err != nil {
		return n, err
	}
	if ok {
		if n.meminfo, err = ParseNodeMeminfo(id, s); err != nil {
			return n, invalid(path, s, err)
		}
	} else {
		w.add("node%d: meminfo is missing: memory reported as 0", id)
	}

	if n.hugepages, err = f.readHugepages(dir + "/hugepages"); err != nil {
		return n, err
	}
	// A pool whose bytes do not fit 63 bits (nr_hugepages = 2^64-1 in an
	// edited dump) would overflow every sum downstream.
	for _, h := range n.hugepages {
		pool := fmt.Sprintf("%s/hugepages/hugepages-%dkB", dir, h.PageSize>>10)
		for _, c := range []struct {
			file  string
			count uint64
		}{{"nr_hugepages", h.Total}, {"free_hugepages", h.Free}, {"surplus_hugepages", h.Surplus}} {
			if c.count > (1<<63-1)/h.PageSize {
				return n, fmt.Errorf("%s/%s: %d pages of %s do not fit in 2^63 bytes: not a pool a node can have", pool, c.file, c.count, units.FormatBytes(h.PageSize))
			}
		}
		if h.Free > h.Total {
			return n, fmt.Errorf("%s: %d free pages, more than the %d in the pool", pool, h.Free, h.Total)
		}
	}

	path = dir + "/distance"
	s, ok, err = f.read(path)
	if err != nil {
		return n, err
	}
	if ok {
		n.distText = s
		if n.distances, err = parseDistances(s); err != nil {
			return n, invalid(path, s, err)
		}
	}
	return n, nil
}

// parseDistances parses a node's distance line: ACPI SLIT values, 10 for
// local, at most 255.
func parseDistances(s string) ([]int, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty")
	}
	d := make([]int, len(fields))
	for i, field := range fields {
		v, err := parseDecimal(field, 0, 255)
		if err != nil {
			return nil, fmt.Errorf("distance %q: %w", field, err)
		}
		d[i] = int(v)
	}
	return d, nil
}

// poolReadTries bounds the reads of one pool that the kernel keeps
// changing while it is read.
const poolReadTries = 5

// readPool reads one pool's nr, free and surplus pages as one snapshot.
// The kernel keeps no lock across the three files: a pool that grows or
// shrinks while they are read (the hugepage oneshot, another tool, a
// surplus page freed) gives a torn read, such as more free pages than
// the pool holds. So nr_hugepages is read again after the others, and
// the three are read again while it moved, at most poolReadTries times.
func (f FS) readPool(dir string, size uint64) (Hugepages, error) {
	h := Hugepages{PageSize: size}
	for try := 1; ; try++ {
		for _, v := range []struct {
			file string
			dst  *uint64
		}{{"nr_hugepages", &h.Total}, {"free_hugepages", &h.Free}, {"surplus_hugepages", &h.Surplus}} {
			n, err := f.readPoolFile(dir + "/" + v.file)
			if err != nil {
				return h, err
			}
			*v.dst = n
		}
		again, err := f.readPoolFile(dir + "/nr_hugepages")
		if err != nil {
			return h, err
		}
		if again == h.Total {
			return h, nil
		}
		if try == poolReadTries {
			return h, fmt.Errorf("%s: nr_hugepages changed while the pool was read, %d times (last %d, then %d): read again once it is settled", dir, try, h.Total, again)
		}
	}
}

func (f FS) readPoolFile(path string) (uint64, error) {
	n, ok, err := f.readUint(path)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%s: missing (every hugepages-<size> directory has it)", path)
	}
	return n, nil
}

// readHugepages reads hugepages/hugepages-<size>kB/{nr,free,surplus}_hugepages
// for every page size the kernel offers on this node, ascending by size.
func (f FS) readHugepages(dir string) ([]Hugepages, error) {
	entries, err := f.readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Hugepages{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	pages := []Hugepages{}
	for _, e := range entries {
		name := e.Name()
		sizeText, ok := strings.CutPrefix(name, "hugepages-")
		if !ok {
			continue
		}
		size, err := units.ParseKernelKB(sizeText)
		if err != nil || size == 0 {
			return nil, fmt.Errorf("%s/%s: a hugepages directory must be named hugepages-<size>kB", dir, name)
		}
		h, err := f.readPool(dir+"/"+name, size)
		if err != nil {
			return nil, err
		}
		pages = append(pages, h)
	}
	slices.SortFunc(pages, func(a, b Hugepages) int {
		switch {
		case a.PageSize < b.PageSize:
			return -1
		case a.PageSize > b.PageSize:
			return 1
		}
		return 0
	})
	return pages, nil
}
