package kubeletstate

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/units"
)

// MemoryCheckpoint is what the repair reads of memory_manager_state
// (kubelet's MemoryManagerCheckpoint): the policy, each NUMA node's
// resources' totals as kubelet counted the machine, and the pods holding
// memory.
type MemoryCheckpoint struct {
	PolicyName   string                     `json:"policyName"`
	MachineState map[string]memoryNodeState `json:"machineState"`
	Entries      map[string]json.RawMessage `json:"entries,omitempty"`
}

type memoryNodeState struct {
	MemoryMap map[string]struct {
		Total uint64 `json:"total"`
	} `json:"memoryMap"`
}

// NodeSizes is the machine as kubelet's Memory Manager counts it when it
// starts: per NUMA node, each resource's total in bytes ("memory": the
// node's MemTotal; "hugepages-2Mi": its pages × their size).
type NodeSizes map[int]map[string]uint64

// SizesOf is t's NodeSizes.
func SizesOf(t *numa.Topology) NodeSizes {
	out := NodeSizes{}
	for _, n := range t.Nodes {
		r := map[string]uint64{"memory": n.MemoryBytes}
		for _, h := range n.Hugepages {
			r[units.HugepageResource(h.PageSize)] = h.Total * h.PageSize
		}
		out[n.ID] = r
	}
	return out
}

// MachineMoved says where c's machine differs from now ("" where it does
// not): the first node, by number, and resource whose total moved. Only
// the static policy keeps a machine state; kubelet 1.37 refuses to start
// on one that is not the machine's ("the expected machine state is
// different from the real one"), as after a reboot that moved a node's
// MemTotal (the e2e's VM: node 0 and node 1 by tens of MiB).
func (c *MemoryCheckpoint) MachineMoved(now NodeSizes) string {
	if c.PolicyName != "Static" {
		return ""
	}
	var ids []int
	for key := range c.MachineState {
		id, err := strconv.Atoi(key)
		if err != nil {
			return fmt.Sprintf("node %q is not a NUMA node number", key)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		have, ok := now[id]
		if !ok {
			return fmt.Sprintf("node %d is not on this machine", id)
		}
		state := c.MachineState[strconv.Itoa(id)]
		var names []string
		for name := range state.MemoryMap {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if was, is := state.MemoryMap[name].Total, have[name]; was != is {
				return fmt.Sprintf("node %d's %s was %s, is %s", id, name, units.FormatBytes(was), units.FormatBytes(is))
			}
		}
	}
	return ""
}

// RepairMemoryMachine moves the kubelet's memory_manager_state in root
// dir dir aside (to memory_manager_state.numa-partition-stale) when its
// machine state is not the machine now (MachineMoved), and leaves it
// otherwise. Kubernetes' recipe for that state is to drain the Node and
// remove the file; here it is run before the kubelet starts, which after
// a reboot runs no container yet, and kubelet admits its Node's pods
// again and places their memory anew. Like RepairSharedPool: no
// checkpoint, nothing to do; read bounded, no symlink followed.
// machine is read only when there is a static-policy checkpoint to
// compare (discovery at every kubelet start is not needed otherwise).
func RepairMemoryMachine(dir string, machine func() (NodeSizes, error)) (Repair, error) {
	r := fsutil.NewRoot(dir)
	b, err := readCheckpoint(r, dir, MemoryFile)
	if b == nil || err != nil {
		return Repair{}, err
	}
	var c MemoryCheckpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return Repair{}, fmt.Errorf("%s is not a kubelet Memory Manager checkpoint: %w", path.Join(dir, MemoryFile), err)
	}
	if c.PolicyName != "Static" {
		return Repair{}, nil
	}
	now, err := machine()
	if err != nil {
		return Repair{}, err
	}
	why := c.MachineMoved(now)
	if why == "" {
		return Repair{}, nil
	}
	rep, err := moveAside(r, dir, MemoryFile, podsOf(c.Entries))
	rep.Why = why
	return rep, err
}
