package transaction

import (
	"context"
	"fmt"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// KindCPUSetV1 writes a partition slice's cpuset v1 group, on a cgroup v1
// or hybrid host, where systemd's AllowedCPUs= does nothing.
const KindCPUSetV1 Kind = "cpuset-v1"

// SetCPUSetV1 makes Unit's cpuset v1 group hold CPUs and Mems; the undo
// restores or removes it.
type SetCPUSetV1 struct {
	Unit string          `json:"unit"`
	CPUs bitmask.CPUSet  `json:"cpus,omitzero"`
	Mems bitmask.NodeSet `json:"mems,omitzero"`
}

func (SetCPUSetV1) Kind() Kind { return KindCPUSetV1 }

func (a SetCPUSetV1) describe() string {
	return fmt.Sprintf("%s cpus=%s mems=%s", a.Unit, a.CPUs, a.Mems)
}

func (a SetCPUSetV1) run(e *Executor, ctx context.Context, _ Current, _ *Result) ([]undo, error) {
	g := cpusetV1Group(e.Root, sliceCgroup(a.Unit))
	existed := g.exists()
	oldCPUs, _ := g.read("cpuset.cpus")
	oldMems, _ := g.read("cpuset.mems")
	u := undo{what: "cpuset v1 " + a.Unit, run: func(context.Context) error {
		if !existed {
			return g.remove()
		}
		return g.set(oldCPUs, oldMems)
	}}
	return []undo{u}, g.set(a.CPUs.String(), a.Mems.String())
}
