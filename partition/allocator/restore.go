package allocator

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/partition/policy/memorymanager"
)

// Restore rebuilds an allocator from a checkpointed State on (possibly
// drifted) hardware described by cfg. Without drift the Node Map is taken
// verbatim; with drift every pinned container's blocks are charged anew in
// pod UID order and drift notes describe what changed. Error when they no
// longer fit.
func Restore(cfg Config, st State) (*Allocator, []string, error) {
	a, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	order := map[string][]string{}
	for i, d := range st.Allocations {
		if d.PodUID == "" || !d.Admitted {
			return nil, nil, fmt.Errorf("checkpoint allocations[%d]: empty uid or not admitted", i)
		}
		if _, dup := a.pods[d.PodUID]; dup {
			return nil, nil, fmt.Errorf("checkpoint allocations[%d]: duplicate uid %q", i, d.PodUID)
		}
		if err := checkDecision(d); err != nil {
			return nil, nil, fmt.Errorf("checkpoint allocations[%d] (pod %s): %w", i, d.PodUID, err)
		}
		a.pods[d.PodUID] = copyDecision(d)
		for _, c := range d.Containers {
			if _, ok := st.Blocks[d.PodUID][c.Name]; ok {
				order[string(d.PodUID)] = append(order[string(d.PodUID)], c.Name)
			}
		}
	}
	blocks := map[string]map[string][]memorymanager.Block{}
	for uid, bs := range st.Blocks {
		if _, ok := a.pods[uid]; !ok {
			return nil, nil, fmt.Errorf("checkpoint blocks: pod %q has no allocation", uid)
		}
		for name, list := range bs {
			for j, b := range list {
				if msg := bytesProblem(b.Size); msg != "" {
					return nil, nil, fmt.Errorf("checkpoint blocks: pod %q container %q block %d (%s): %s", uid, name, j, b.Type, msg)
				}
			}
		}
		blocks[string(uid)] = bs
	}
	drift := a.mm.Drift(st.Machine)
	if len(drift) == 0 {
		if err := a.mm.Adopt(st.Machine, blocks, order); err != nil {
			return nil, nil, err
		}
		return a, nil, nil
	}
	uids := make([]types.UID, 0, len(order))
	for uid := range order {
		uids = append(uids, types.UID(uid))
	}
	slices.Sort(uids)
	for _, uid := range uids {
		for _, name := range order[string(uid)] {
			if err := a.mm.Recharge(string(uid), name, st.Blocks[uid][name]); err != nil {
				return nil, drift, fmt.Errorf("restoring on changed hardware (%s): %w", drift[0], err)
			}
		}
	}
	return a, drift, nil
}
