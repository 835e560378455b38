package transaction

import (
	"context"

	"github.com/numa-partition/numa-partition/slices/systemd"
)

// KindStart starts a unit that is not active.
const KindStart Kind = "start"

// StartUnit starts Unit; the undo stops it again if it was not active.
type StartUnit struct {
	Unit string `json:"unit"`
}

func (StartUnit) Kind() Kind         { return KindStart }
func (a StartUnit) describe() string { return a.Unit }

func (a StartUnit) run(e *Executor, ctx context.Context, cur Current, _ *Result) ([]undo, error) {
	return e.unitJob(ctx, systemd.Manager.StartUnit, a.Unit, cur)
}
