package transaction

import (
	"context"

	"github.com/numa-partition/numa-partition/slices/systemd"
)

// KindRestart restarts a running unit whose files changed.
const KindRestart Kind = "restart"

// RestartUnit restarts Unit; the undo restores whether it ran.
type RestartUnit struct {
	Unit string `json:"unit"`
}

func (RestartUnit) Kind() Kind         { return KindRestart }
func (a RestartUnit) describe() string { return a.Unit }

func (a RestartUnit) run(e *Executor, ctx context.Context, cur Current, _ *Result) ([]undo, error) {
	return e.unitJob(ctx, systemd.Manager.RestartUnit, a.Unit, cur)
}
