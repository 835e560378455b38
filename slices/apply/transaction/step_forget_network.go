package transaction

import "context"

// KindForgetNetwork removes a network object of the previous generation
// the plan no longer has (a renamed bridge), or moves devices a partition
// no longer holds back to the host.
const KindForgetNetwork Kind = "forget-network"

// ForgetNetwork removes Network. Nothing to undo: a rollback restarts the
// previous generation's units, whose oneshots make their bridge again and
// move their devices in.
type ForgetNetwork struct {
	Network *StaleNetwork `json:"network"`
}

func (ForgetNetwork) Kind() Kind         { return KindForgetNetwork }
func (a ForgetNetwork) describe() string { return a.Network.String() }

func (a ForgetNetwork) run(e *Executor, _ context.Context, _ Current, _ *Result) ([]undo, error) {
	return nil, RemoveStaleNetwork(e.Root, *a.Network)
}

// forgetNetwork removes the previous generation's network objects (Gather's
// StaleNetwork) after the reload, before the uplink and namespace oneshots
// restart: their ExecStop= knows the new plan's only.
func forgetNetwork(p *planning) {
	for _, s := range p.c.StaleNetwork {
		p.add(ForgetNetwork{Network: &s}, "no longer planned")
	}
}
