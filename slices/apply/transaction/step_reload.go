package transaction

import "context"

// KindReload is systemd's daemon-reload, once, after the files changed.
const KindReload Kind = "daemon-reload"

// DaemonReload makes systemd read the unit files again. Nothing to undo:
// a rollback reloads after it restored the files.
type DaemonReload struct{}

func (DaemonReload) Kind() Kind       { return KindReload }
func (DaemonReload) describe() string { return "" }

func (DaemonReload) run(e *Executor, ctx context.Context, _ Current, _ *Result) ([]undo, error) {
	return nil, e.Systemd.Reload(ctx)
}

// reload reloads once when a file changed or a slice's runtime drop-ins
// went.
func reload(p *planning) {
	if len(p.changed) > 0 || len(p.c.StaleSlices) > 0 {
		p.add(DaemonReload{}, "")
	}
}
