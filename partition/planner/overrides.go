package planner

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// matchOverrides ties each [[partition]] entry to the partition holding its
// nodes. In custom mode without groups the entries made the groups and are
// tied already.
func (pl *planning) matchOverrides(groups []group) {
	m, c, col := pl.m, pl.c, pl.col
	if c.Partitioning.Mode == config.ModeCustom && len(c.Partitioning.Groups) == 0 {
		return
	}
	by := map[int]int{} // group index → override index
	for i, p := range c.Partitions {
		key := fmt.Sprintf("partition[%d].nodes", i)
		if !p.Nodes.Set || p.Nodes.Nodes.IsEmpty() {
			col.Add(fmt.Sprintf("partition[%d]", i), "needs nodes to say which partition it overrides (e.g. nodes = [0])")
			continue
		}
		if unknown := p.Nodes.Nodes.Difference(m.nodes); !unknown.IsEmpty() {
			col.Add(key, "names nodes %s that the machine does not have (it has %s)", unknown, m.nodes)
			continue
		}
		var hits []int
		for gi, g := range groups {
			if !g.nodes.Intersect(p.Nodes.Nodes).IsEmpty() {
				hits = append(hits, gi)
			}
		}
		switch {
		case len(hits) == 0:
			col.Add(key, "no partition holds nodes %s (excluded, or without CPUs and memory)", p.Nodes.Nodes)
		case len(hits) > 1 || !p.Nodes.Nodes.IsSubsetOf(groups[hits[0]].nodes):
			col.Add(key, "nodes %s span partitions %s; an entry overrides one partition", p.Nodes.Nodes, groupList(groups, hits))
		default:
			if prev, dup := by[hits[0]]; dup {
				col.Add(key, "selects the same partition (nodes %s) as partition[%d]", groups[hits[0]].nodes, prev)
				continue
			}
			by[hits[0]] = i
			groups[hits[0]].override = i
		}
	}
}

func groupList(groups []group, idx []int) string {
	parts := make([]string, len(idx))
	for i, gi := range idx {
		parts[i] = groups[gi].nodes.String()
	}
	return strings.Join(parts, " and ")
}

// settings are one partition's kubelet settings after overrides.
type settings struct {
	k   config.KubeletConfig
	key map[string]string       // setting → the config key it came from
	p   *config.PartitionConfig // the override, nil for none
	pre string                  // "partition[3]." when overridden
}

// merge applies a [[partition]] entry over [kubelet]. key records where
// each overridable value came from, so errors point at the right line.
// The overridable settings are KubeletOverrides' fields: each one the
// entry sets replaces [kubelet]'s.
func merge(c *config.Config, override int) settings {
	s := settings{k: c.Kubelet, key: map[string]string{"labels": "kubelet.labels", "taints": "kubelet.taints",
		"binary": "kubelet.binary", "runtime.binary": "runtime.binary"}}
	fields := reflect.VisibleFields(reflect.TypeOf(config.KubeletOverrides{}))
	for _, f := range fields {
		s.key[f.Tag.Get("toml")] = "kubelet." + f.Tag.Get("toml")
	}
	if override < 0 {
		return s
	}
	p := &c.Partitions[override]
	pre := fmt.Sprintf("partition[%d].", override)
	s.p, s.pre = p, pre
	if p.KubeletBinary != "" {
		s.k.Binary, s.key["binary"] = p.KubeletBinary, pre+"kubelet_binary"
	}
	if p.ContainerdBinary != "" {
		s.key["runtime.binary"] = pre + "containerd_binary"
	}
	from, to := reflect.ValueOf(p.KubeletOverrides), reflect.ValueOf(&s.k.KubeletOverrides).Elem()
	for _, f := range fields {
		if v := from.FieldByIndex(f.Index); !v.IsZero() {
			to.FieldByIndex(f.Index).Set(v)
			s.key[f.Tag.Get("toml")] = pre + f.Tag.Get("toml")
		}
	}
	return s
}
