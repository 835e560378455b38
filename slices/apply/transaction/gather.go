package transaction

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/hugepool"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// gatherFiles reads the files at every desired and recorded path (a
// missing one is absent from the map).
func gatherFiles(root string, d Desired, prev *record.Record) (map[string]FileState, error) {
	paths := map[string]bool{}
	for _, f := range d.Files {
		paths[f.Path] = true
	}
	if prev != nil {
		for _, f := range prev.Files {
			paths[f.Path] = true
		}
	}
	files := map[string]FileState{}
	for p := range paths {
		fs, ok, err := host.ReadFileState(root, p)
		if err != nil {
			return nil, fmt.Errorf("reading the host: %w", err)
		}
		if ok {
			files[p] = fs
		}
	}
	return files, nil
}

// Gather reads what Plan compares against: the files at every desired and
// recorded path, the state of every desired and recorded unit, and the
// hugepage pools.
//
// offline (a root no systemd runs on), the kernel's network namespaces
// are not read: no device is known to be stranded in a stale one.
func Gather(ctx context.Context, root, sysfs string, m systemd.Manager, d Desired, prev *record.Record, offline bool) (Current, error) {
	c := Current{Units: map[string]systemd.UnitInfo{}, Hugepages: map[HugepageKey]uint64{}, Record: prev}
	var err error
	if c.Files, err = gatherFiles(root, d, prev); err != nil {
		return c, err
	}
	if c.KubeletStates, err = GatherKubeletState(root, d); err != nil {
		return c, err
	}
	names := map[string]bool{}
	for _, u := range d.Units {
		names[u.Name] = true
	}
	if prev != nil {
		for _, u := range prev.Units {
			names[u.Name] = true
		}
	}
	for n := range names {
		u, err := m.Unit(ctx, n)
		if err != nil {
			return c, fmt.Errorf("reading the host: %w", err)
		}
		c.Units[n] = u
	}
	if prev != nil {
		planned := map[string]bool{}
		for _, s := range d.Slices {
			planned[s.Unit] = true
		}
		for _, s := range prev.Slices {
			if !planned[s.Unit] && len(SliceLeftovers(root, prev.CgroupMode, s.Unit)) > 0 {
				c.StaleSlices = append(c.StaleSlices, s.Unit)
			}
		}
	}
	if !offline {
		if c.StaleNetwork, err = staleNetwork(root, prev, d); err != nil {
			return c, err
		}
	}
	if d.CgroupMode != CgroupV2 {
		c.CPUSetsV1 = map[string]string{}
		for _, u := range d.Units {
			if u.Partition == "" || !strings.HasSuffix(u.Name, ".slice") {
				continue
			}
			g := cpusetV1Group(root, sliceCgroup(u.Name))
			if !g.exists() {
				continue
			}
			cpus, err := g.read("cpuset.cpus")
			if err != nil {
				return c, fmt.Errorf("reading the host: %w", err)
			}
			mems, err := g.read("cpuset.mems")
			if err != nil {
				return c, fmt.Errorf("reading the host: %w", err)
			}
			c.CPUSetsV1[u.Name] = cpus + "/" + mems
		}
	}
	for _, h := range d.Hugepages {
		p := hugepool.Path(sysfs, h.Node, h.PageSize)
		n, err := hugepool.Read(p)
		if errors.Is(err, fs.ErrNotExist) {
			return c, fmt.Errorf("the plan wants %s, but %s does not exist: no such node or page size on this host", h, p)
		}
		if err != nil {
			return c, fmt.Errorf("reading the host: %w", err)
		}
		c.Hugepages[HugepageKey{h.Node, h.PageSize}] = n
	}
	return c, nil
}
