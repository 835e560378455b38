package transaction

import (
	"context"
	"fmt"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// KindSetCPUs sets a slice's CPUs and memory nodes live, as `systemctl
// set-property --runtime` does.
const KindSetCPUs Kind = "set-property"

// SetSliceCPUs sets Unit's AllowedCPUs= and AllowedMemoryNodes= live;
// the undo sets those it had.
type SetSliceCPUs struct {
	Unit string          `json:"unit"`
	CPUs bitmask.CPUSet  `json:"cpus,omitzero"`
	Mems bitmask.NodeSet `json:"mems,omitzero"`
}

func (SetSliceCPUs) Kind() Kind { return KindSetCPUs }

func (a SetSliceCPUs) describe() string {
	return fmt.Sprintf("--runtime %s AllowedCPUs=%s AllowedMemoryNodes=%s", a.Unit, a.CPUs, a.Mems)
}

func (a SetSliceCPUs) run(e *Executor, ctx context.Context, cur Current, _ *Result) ([]undo, error) {
	m := e.Systemd
	st := cur.Units[a.Unit]
	u := undo{what: "set-property " + a.Unit, run: func(ctx context.Context) error {
		return m.SetUnitProperties(ctx, a.Unit, systemd.AllowedCPUs(st.AllowedCPUs), systemd.AllowedMemoryNodes(st.AllowedMemoryNodes))
	}}
	return []undo{u}, m.SetUnitProperties(ctx, a.Unit, systemd.AllowedCPUs(a.CPUs), systemd.AllowedMemoryNodes(a.Mems))
}
