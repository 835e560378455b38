package transaction

import (
	"context"

	"github.com/numa-partition/numa-partition/slices/systemd"
)

// KindEnable enables a unit the plan starts at boot.
const KindEnable Kind = "enable"

// EnableUnit enables Unit; the undo disables it if it was disabled.
type EnableUnit struct {
	Unit string `json:"unit"`
}

func (EnableUnit) Kind() Kind         { return KindEnable }
func (a EnableUnit) describe() string { return a.Unit }

func (a EnableUnit) run(e *Executor, ctx context.Context, cur Current, _ *Result) ([]undo, error) {
	return e.unitFileJob(ctx, "enable", a.Unit, cur, systemd.Manager.EnableUnitFiles, systemd.Manager.DisableUnitFiles, false)
}

// enableUnits enables every unit the plan enables that is not enabled, or
// whose files changed (its [Install] section may have).
func enableUnits(p *planning) {
	for _, u := range p.d.Units {
		if u.Enable && (!p.c.Units[u.Name].Enabled() || p.unitChanged(u)) {
			p.add(EnableUnit{Unit: u.Name}, "")
		}
	}
}
