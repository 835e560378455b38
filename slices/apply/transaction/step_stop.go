package transaction

import (
	"context"

	"github.com/numa-partition/numa-partition/slices/systemd"
)

// KindStop stops a unit: one the plan no longer has, or a kubelet that
// starts again on fresh manager state.
const KindStop Kind = "stop"

// StopUnit stops Unit; the undo starts it again if it ran.
type StopUnit struct {
	Unit string `json:"unit"`
}

func (StopUnit) Kind() Kind         { return KindStop }
func (a StopUnit) describe() string { return a.Unit }

func (a StopUnit) run(e *Executor, ctx context.Context, cur Current, _ *Result) ([]undo, error) {
	return e.unitJob(ctx, systemd.Manager.StopUnit, a.Unit, cur)
}
