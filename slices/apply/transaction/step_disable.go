package transaction

import (
	"context"

	"github.com/numa-partition/numa-partition/slices/systemd"
)

// KindDisable disables a unit the plan no longer has.
const KindDisable Kind = "disable"

// DisableUnit disables Unit; the undo enables it if it was enabled.
type DisableUnit struct {
	Unit string `json:"unit"`
}

func (DisableUnit) Kind() Kind         { return KindDisable }
func (a DisableUnit) describe() string { return a.Unit }

func (a DisableUnit) run(e *Executor, ctx context.Context, cur Current, _ *Result) ([]undo, error) {
	return e.unitFileJob(ctx, "disable", a.Unit, cur, systemd.Manager.DisableUnitFiles, systemd.Manager.EnableUnitFiles, true)
}
