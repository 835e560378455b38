package render

import (
	"fmt"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// Ports lists the TCP ports the plan's daemons will listen on and the
// unit that will own each (apply refuses ports something else holds).
// The planner's port rule (planner.CheckPorts: 1-65535, no
// well-known host component's, none twice) held when the plan was made
// or read.
func Ports(plan *planner.Plan, units []bundle.Unit) []bundle.Port {
	ps := []bundle.Port{}
	for i := range plan.Partitions {
		if plan.Partitions[i].Network != nil {
			// It listens in a namespace of its own, made for it: nothing
			// of the host's can hold its ports.
			continue
		}
		ps = append(ps, PartitionPorts(&plan.Partitions[i], units)...)
	}
	return ps
}

// PartitionPorts are the TCP ports partition p's daemons will listen on
// (in its network namespace when it has one), and the unit that will own
// each: what Ports lists of a partition in the host's namespace, and
// apply's preflight checks in a partition's own.
func PartitionPorts(p *planner.Partition, units []bundle.Unit) []bundle.Port {
	unitOf := func(ph bundle.Phase) string {
		for _, u := range units {
			if u.Partition == p.Name && u.Phase == ph {
				return u.Name
			}
		}
		return ""
	}
	var ps []bundle.Port
	ku := unitOf(bundle.PhaseKubelet)
	for _, kp := range []struct {
		port int
		what string
	}{{p.Kubelet.Port, "port"}, {p.Kubelet.HealthzPort, "healthzPort"}, {p.Kubelet.ReadOnlyPort, "readOnlyPort"}} {
		if kp.port > 0 {
			ps = append(ps, bundle.Port{Port: kp.port, Owner: fmt.Sprintf("%s kubelet %s", p.Name, kp.what), Unit: ku})
		}
	}
	if n := p.Allocator.MetricsPort; n != 0 {
		ps = append(ps, bundle.Port{Port: n, Owner: p.Name + " allocator metricsPort", Unit: unitOf(bundle.PhaseAllocator)})
	}
	return ps
}
