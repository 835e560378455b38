package render

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/nriplugin"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/partition/fromplan"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// A change of any field of a partition that changes what its allocator
// makes of the plan changes the digest in its drop-in, so apply restarts
// it: every leaf of planner.Partition is changed in turn, and what the
// allocator reads is taken from the code that reads it (fromplan, the
// NRI plugin's topology, the drift check's cpuset and pools).
func TestServedPlanCoversWhatTheAllocatorReads(t *testing.T) {
	// The daemon says at start where the machine's memory differs from
	// the plan's; the walk changes it on purpose.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	base := seedPlan().Partitions[1]
	base.Network = &planner.PartitionNetwork{Namespace: "np-node1", Address: netip.MustParsePrefix("10.0.0.11/24")}
	base.Allocator.MetricsPort = 9101
	topo := seedTopology()
	baseReads, baseDigest := allocatorReads(t, base, topo), digestOf(t, base)
	var read, unread []string
	for _, leaf := range leaves(reflect.TypeOf(base), "") {
		p := clonePartition(t, base)
		leaf.mutate(reflect.ValueOf(&p).Elem())
		changedReads := allocatorReads(t, p, topo) != baseReads
		changedDigest := digestOf(t, p) != baseDigest
		if changedReads {
			read = append(read, leaf.path)
			assert.True(t, changedDigest, "%s changes what the allocator reads, and not its drop-in's digest: add it to servedPlan", leaf.path)
		} else {
			unread = append(unread, leaf.path)
		}
	}
	t.Logf("read: %s", strings.Join(read, " "))
	t.Logf("not read: %s", strings.Join(unread, " "))
	// The walk reached what matters (a walk that changed nothing would pass).
	for _, must := range []string{".Memory[0].Hugepages[0].Count", ".Memory[0].ReservedBytes", ".Kubelet.TopologyManagerPolicy", ".CPUs", ".Allocator.Socket"} {
		assert.Contains(t, read, must)
	}
	// What it does not read leaves it running: a kubelet canary, maxPods,
	// and the memory size, which moves between boots.
	for _, keep := range []string{".Kubelet.Binary", ".Kubelet.MaxPods", ".Runtime.Binary", ".Memory[0].TotalBytes"} {
		p := clonePartition(t, base)
		for _, leaf := range leaves(reflect.TypeOf(base), "") {
			if leaf.path == keep {
				leaf.mutate(reflect.ValueOf(&p).Elem())
			}
		}
		assert.Equal(t, baseDigest, digestOf(t, p), "%s changes the allocator's digest", keep)
	}
}

// allocatorReads is everything the allocator daemon makes of partition
// p on the machine topo, as text.
func allocatorReads(t *testing.T, p planner.Partition, topo *numa.Topology) string {
	t.Helper()
	cfg, cfgErr := fromplan.AllocatorConfig(p, topo)
	var opts daemon.Options
	optsErr := fromplan.DaemonOptions(&opts, &p, topo, fromplan.Explicit{})
	cpus, cpusErr := nriplugin.TopologyOf(p, topo)
	b, err := json.Marshal(map[string]any{
		"config": cfg, "configErr": fmt.Sprint(cfgErr),
		"places":  []any{opts.Socket, opts.StateDir, opts.SocketGroup, opts.SyncBeforeAnswer, opts.MetricsAddr, opts.Labels},
		"optsErr": fmt.Sprint(optsErr),
		"nri":     cpus, "nriErr": fmt.Sprint(cpusErr),
		// The drift check's plan (cmd/numa-partition: nodeConditionTask).
		"cpuset": SliceCpuset(&p), "pools": PartitionHugepagePools(&p),
		// Read where the daemon runs them: the NRI plugin's options,
		// the pod cache's and the Node condition's credentials.
		"direct": []any{p.Name, p.Slice, p.NodeName, p.Kubelet.Kubeconfig, p.Allocator},
	})
	require.NoError(t, err)
	return string(b)
}

func digestOf(t *testing.T, p planner.Partition) string {
	t.Helper()
	d, err := servedPlanDigest(&p)
	require.NoError(t, err)
	return d
}

func clonePartition(t *testing.T, p planner.Partition) planner.Partition {
	t.Helper()
	b, err := json.Marshal(p)
	require.NoError(t, err)
	var out planner.Partition
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// seedTopology is the machine of seedPlan: two nodes of four CPUs, a
// core each, 16 GiB each.
func seedTopology() *numa.Topology {
	topo := &numa.Topology{}
	for n := 0; n < 2; n++ {
		cpus := bitmask.NewCPUSet(4*n, 4*n+1, 4*n+2, 4*n+3)
		topo.Nodes = append(topo.Nodes, numa.Node{ID: n, CPUs: cpus, MemoryBytes: 16 * gi, Distances: []int{10 + 11*n, 21 - 11*n}})
		s := numa.Socket{ID: n, Nodes: bitmask.NewNodeSet(n), CPUs: cpus}
		for _, c := range cpus.IDs() {
			s.Cores = append(s.Cores, numa.Core{CoreID: c, Socket: n, Node: n, CPUs: bitmask.NewCPUSet(c)})
		}
		topo.Sockets = append(topo.Sockets, s)
	}
	return topo
}

// leaf is one value of a partition the walk changes.
type leaf struct {
	path   string
	mutate func(reflect.Value) // on the whole partition
}

var (
	cpuSetType  = reflect.TypeOf(bitmask.CPUSet{})
	nodeSetType = reflect.TypeOf(bitmask.NodeSet{})
	prefixType  = reflect.TypeOf(netip.Prefix{})
	addrType    = reflect.TypeOf(netip.Addr{})
)

// leaves lists every leaf reachable from type typ through exported
// fields, the first element of a slice and the pointee of a pointer
// (made where nil), each with a change of it.
func leaves(typ reflect.Type, path string) []leaf {
	at := func(step func(reflect.Value) reflect.Value, inner []leaf) []leaf {
		out := make([]leaf, len(inner))
		for i, l := range inner {
			out[i] = leaf{path: l.path, mutate: func(v reflect.Value) { l.mutate(step(v)) }}
		}
		return out
	}
	switch {
	case typ == cpuSetType:
		return []leaf{{path, func(v reflect.Value) {
			v.Set(reflect.ValueOf(v.Interface().(bitmask.CPUSet).Union(bitmask.NewCPUSet(63))))
		}}}
	case typ == nodeSetType:
		return []leaf{{path, func(v reflect.Value) {
			v.Set(reflect.ValueOf(v.Interface().(bitmask.NodeSet).Union(bitmask.NewNodeSet(7))))
		}}}
	case typ == prefixType:
		return []leaf{{path, func(v reflect.Value) { v.Set(reflect.ValueOf(netip.MustParsePrefix("10.9.9.9/16"))) }}}
	case typ == addrType:
		return []leaf{{path, func(v reflect.Value) { v.Set(reflect.ValueOf(netip.MustParseAddr("10.9.9.1"))) }}}
	}
	switch typ.Kind() {
	case reflect.Struct:
		var out []leaf
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			out = append(out, at(func(v reflect.Value) reflect.Value { return v.Field(i) }, leaves(f.Type, path+"."+f.Name))...)
		}
		return out
	case reflect.Pointer:
		return at(func(v reflect.Value) reflect.Value {
			if v.IsNil() {
				v.Set(reflect.New(typ.Elem()))
			}
			return v.Elem()
		}, leaves(typ.Elem(), path))
	case reflect.Slice:
		return at(func(v reflect.Value) reflect.Value {
			if v.Len() == 0 {
				v.Set(reflect.Append(v, reflect.Zero(typ.Elem())))
			}
			return v.Index(0)
		}, leaves(typ.Elem(), path+"[0]"))
	case reflect.Map:
		return []leaf{{path, func(v reflect.Value) {
			if v.IsNil() {
				v.Set(reflect.MakeMap(typ))
			}
			v.SetMapIndex(reflect.ValueOf("walked").Convert(typ.Key()), reflect.ValueOf("true").Convert(typ.Elem()))
		}}}
	case reflect.String:
		return []leaf{{path, func(v reflect.Value) { v.SetString(v.String() + "-walked") }}}
	case reflect.Bool:
		return []leaf{{path, func(v reflect.Value) { v.SetBool(!v.Bool()) }}}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return []leaf{{path, func(v reflect.Value) { v.SetInt(v.Int() + 1) }}}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []leaf{{path, func(v reflect.Value) { v.SetUint(v.Uint() + 1) }}}
	}
	panic(fmt.Sprintf("%s: the walk cannot change a %s: teach leaves", path, typ))
}
