package render

import (
	"fmt"
	"net"
	"strconv"

	"github.com/numa-partition/numa-partition/partition/planner"
)

// Ports lists the TCP ports the plan's daemons will listen on and the
// unit that will own each (apply refuses ports something else holds).
func Ports(plan *planner.Plan, units []Unit) ([]Port, error) {
	unitOf := func(part string, ph Phase) string {
		for _, u := range units {
			if u.Partition == part && u.Phase == ph {
				return u.Name
			}
		}
		return ""
	}
	ps := []Port{}
	for _, p := range plan.Partitions {
		if p.Network != nil {
			// It listens in a namespace of its own, made for it: nothing
			// of the host's can hold its ports.
			continue
		}
		ku := unitOf(p.Name, PhaseKubelet)
		for _, kp := range []struct {
			port int
			what string
		}{{p.Kubelet.Port, "port"}, {p.Kubelet.HealthzPort, "healthzPort"}, {p.Kubelet.ReadOnlyPort, "readOnlyPort"}} {
			if kp.port > 0 {
				ps = append(ps, Port{Port: kp.port, Owner: fmt.Sprintf("%s kubelet %s", p.Name, kp.what), Unit: ku})
			}
		}
		if a := p.Allocator.MetricsAddr; a != "" {
			_, port, err := net.SplitHostPort(a)
			if err != nil {
				return nil, fmt.Errorf("partition %s: allocator metricsAddr %q: %w", p.Name, a, err)
			}
			n, err := strconv.Atoi(port)
			if err != nil || n <= 0 || n > 65535 {
				return nil, fmt.Errorf("partition %s: allocator metricsAddr %q: port must be 1-65535", p.Name, a)
			}
			ps = append(ps, Port{Port: n, Owner: p.Name + " allocator metricsAddr", Unit: unitOf(p.Name, PhaseAllocator)})
		}
	}
	return ps, nil
}
